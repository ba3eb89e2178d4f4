import { createHmac, randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { AntlerError, ErrorCodes, threadPaths } from "@antler/kernel";
import {
  type DiscoveredSandbox,
  type NetworkSettings,
  policyLabelOf,
  type SandboxBackend,
  type SandboxInstance,
  type SandboxRequest,
} from "./backend.js";
import { RELAY_TOKEN_HEADER } from "./sidecar/relay.js";

/** The AIO sandbox image published by agent-infra (GitHub Container Registry). */
export const DEFAULT_AIO_IMAGE = "ghcr.io/agent-infra/sandbox:latest";
/** The port the AIO image serves its API on inside the container. */
export const AIO_CONTAINER_PORT = 8080;
/** The egress sidecar image (built from this package's `sidecar/Dockerfile`). */
export const DEFAULT_SIDECAR_IMAGE = "antler/aio-sidecar:0.1.0";
const SIDECAR_PROXY_PORT = 3128;
const SIDECAR_RELAY_PORT = 8081;

/** Names of everything one sandbox owns on the engine. */
export function dockerNames(sandboxId: string) {
  const base = `antler-aio-${sandboxId}`;
  return { sandbox: base, sidecar: `${base}-sidecar`, internal: `${base}-internal`, egress: `${base}-egress` };
}

export interface DockerBackendOptions {
  image?: string;
  /** The Docker-compatible CLI; default `docker` (a `podman` shim works too). */
  command?: string;
  /** Host interface published ports bind to; default 127.0.0.1 so the sandbox is not reachable from the network. */
  bindHost?: string;
  /** Extra `docker run` arguments placed before the image (e.g. `--memory=2g`). */
  runArgs?: readonly string[];
  /** Milliseconds for each CLI call (`docker run` may pull the image); default 120 000. */
  commandTimeoutMs?: number;
  /**
   * Bind-mounts each thread's host folders (under `baseDir`, as the kernel lays them out) below `root` in the
   * container (see `threadMounts`), so the container and the host see the same uploads, workspace and outputs.
   */
  threadMount?: { baseDir: string; root: string };
  /** Image of the egress sidecar of restricted sandboxes. */
  sidecarImage?: string;
  /**
   * Relay tokens are HMAC(secret, sandbox id + nonce): with a configured secret, a restarted process can still
   * talk to the relay of a sandbox it finds; default a random secret per process.
   */
  relaySecret?: string;
}

/** One bind mount of a thread's host folder into its container. */
export interface ThreadMount {
  host: string;
  container: string;
  readOnly: boolean;
}

/**
 * Every host folder a thread's container gets, below `root` (`/mnt` unless `container_root` says otherwise): the
 * thread's `user-data` (read-write) and its ACP workspace (read-only, at `/mnt/acp-workspace`, where ACP agents
 * leave their work). A further read-only mount (e.g. `/mnt/skills`) is one more entry here.
 */
export function threadMounts(baseDir: string, userId: string, threadId: string, root: string): ThreadMount[] {
  const paths = threadPaths(baseDir, userId, threadId);
  return [
    { host: paths.userData, container: `${root}/user-data`, readOnly: false },
    { host: join(paths.threadDir, "acp-workspace"), container: `${root}/acp-workspace`, readOnly: true },
  ];
}

/** `docker run` arguments of the mounts: `-v <host>:<container>`, with `:ro` for read-only ones. */
export function mountFlags(mounts: readonly ThreadMount[]): string[] {
  return mounts.flatMap((m) => ["-v", `${m.host}:${m.container}${m.readOnly ? ":ro" : ""}`]);
}

/**
 * Local AIO containers started with the Docker CLI: `docker run -d -p 127.0.0.1::8080 <image>`, then
 * `docker port` for the host port. Fails with SANDBOX_UNAVAILABLE when no engine answers `docker info`.
 */
export class DockerBackend implements SandboxBackend {
  readonly kind = "docker" as const;
  private readonly image: string;
  private readonly command: string;
  private readonly bindHost: string;
  private readonly runArgs: readonly string[];
  private readonly timeoutMs: number;
  private readonly threadMount: DockerBackendOptions["threadMount"];
  private readonly sidecarImage: string;
  private readonly relaySecret: string;
  private engineChecked = false;

  constructor(options: DockerBackendOptions = {}) {
    this.image = options.image ?? DEFAULT_AIO_IMAGE;
    this.command = options.command ?? "docker";
    this.bindHost = options.bindHost ?? "127.0.0.1";
    this.runArgs = options.runArgs ?? [];
    this.timeoutMs = options.commandTimeoutMs ?? 120_000;
    this.threadMount = options.threadMount;
    this.sidecarImage = options.sidecarImage ?? DEFAULT_SIDECAR_IMAGE;
    this.relaySecret = options.relaySecret ?? randomBytes(32).toString("hex");
  }

  /** The thread's bind mounts, their host folders created first so each mount has something to bind. */
  async mountArgs(request: Pick<SandboxRequest, "userId" | "threadId" | "mounts">): Promise<string[]> {
    if (!this.threadMount) return [];
    const { baseDir, root } = this.threadMount;
    const paths = threadPaths(baseDir, request.userId, request.threadId);
    // Extra mounts (skills) sit under the same root as the thread's folders: /mnt/skills/x -> <root>/skills/x.
    const extra = (request.mounts ?? []).map((m) => ({
      host: m.hostPath,
      container: `${root}${m.virtualPath.replace(/^\/mnt/, "")}`,
      readOnly: m.readOnly,
    }));
    const mounts = [...threadMounts(baseDir, request.userId, request.threadId, root), ...extra];
    await Promise.all(
      [paths.workspace, paths.uploads, paths.outputs, ...mounts.map((m) => m.host)].map((dir) => mkdir(dir, { recursive: true })),
    );
    return mountFlags(mounts);
  }

  /** Throws SANDBOX_UNAVAILABLE unless `docker info` reaches an engine. Only a success is remembered. */
  async ensureEngine(signal?: AbortSignal): Promise<void> {
    if (this.engineChecked) return;
    const result = await this.run(["info", "--format", "{{.ServerVersion}}"], signal, 20_000);
    if (result.ok && result.stdout.trim().length > 0) {
      this.engineChecked = true;
      return;
    }
    const reason = firstLine(result.stderr) || result.error || `exit code ${result.exitCode ?? "unknown"}`;
    throw new AntlerError(
      ErrorCodes.SANDBOX_UNAVAILABLE,
      `no Docker engine is available for AIO sandboxes: \`${this.command} info\` failed (${reason})`,
      {
        where: "plugins[@antler/sandbox-aio].config.backend",
        hint: "Start a Docker engine on this host, or run sandboxes remotely: set provisioner_url (and backend: provisioner) in the aio plugin's config.",
        details: { command: this.command, exitCode: result.exitCode ?? null },
      },
    );
  }

  async create(request: SandboxRequest): Promise<SandboxInstance> {
    await this.ensureEngine(request.signal);
    if (request.network?.mode === "restricted") return this.createRestricted(request);
    const name = dockerNames(request.sandboxId).sandbox;
    // Whatever held this name was found, and replaced if need be, by the provider's acquire path before this.
    const run = await this.run(
      [
        "run",
        "-d",
        "--rm",
        "--name",
        name,
        "--security-opt",
        "seccomp=unconfined",
        "-p",
        `${this.bindHost}::${AIO_CONTAINER_PORT}`,
        ...sandboxLabels(request.sandboxId, request.network, Date.now()),
        ...(await this.mountArgs(request)),
        ...this.runArgs,
        this.image,
      ],
      request.signal,
    );
    const containerId = run.stdout.trim().split("\n").pop() ?? "";
    if (!run.ok || !containerId) {
      throw this.commandError(`could not start an AIO container from ${this.image}`, run, "Check that the image exists and can be pulled.");
    }
    const port = await this.run(["port", containerId, `${AIO_CONTAINER_PORT}/tcp`], request.signal);
    const hostPort = port.ok ? parseHostPort(port.stdout) : null;
    if (hostPort === null) {
      await this.run(["rm", "-f", containerId]);
      throw this.commandError(
        `could not find the published port of container ${containerId.slice(0, 12)}`,
        port,
        "See `docker ps` for the container.",
      );
    }
    const host = this.bindHost === "0.0.0.0" ? "127.0.0.1" : this.bindHost;
    return {
      sandboxId: request.sandboxId,
      baseUrl: `http://${host}:${hostPort}`,
      handle: containerId,
      network: { mode: "open", label: policyLabelOf(request.network) },
    };
  }

  /**
   * A restricted sandbox: its own internal network (no route out), the sandbox on it alone with the sidecar, and a
   * sidecar on that network and an egress network whose bridge has inter-container communication disabled. The
   * sandbox reaches the outside only through the sidecar's proxy; the provider reaches the sandbox's API only
   * through the sidecar's relay, the one published port. The relay token goes to the sidecar through the CLI's
   * environment (`-e NAME` without a value), so it is on no command line and never in the sandbox.
   */
  private async createRestricted(request: SandboxRequest): Promise<SandboxInstance> {
    const { sandboxId, signal } = request;
    const names = dockerNames(sandboxId);
    const policy = request.network?.policy;
    if (!policy) {
      throw new AntlerError(ErrorCodes.CONFIG_INVALID, "network.mode restricted needs network.policy", {
        where: "plugins[@antler/sandbox-aio].config.network.policy",
        hint: "Give a policy: { label, allow, deny, ports }.",
      });
    }
    const nonce = randomBytes(12).toString("hex");
    const token = this.relayToken(sandboxId, nonce);
    const labels = ["--label", "antler.sandbox=aio", "--label", `antler.sandbox_id=${sandboxId}`];
    const step = async (args: string[], what: string, env?: Record<string, string>) => {
      const result = await this.run(args, signal, this.timeoutMs, env);
      if (!result.ok) throw this.commandError(`could not ${what}`, result, "See `docker network ls` and `docker ps -a` for what is left.");
      return result;
    };
    try {
      await step(["network", "create", "--internal", ...labels, names.internal], "create the sandbox's internal network");
      await step(
        ["network", "create", "--opt", "com.docker.network.bridge.enable_icc=false", ...labels, names.egress],
        "create the egress network",
      );
      const proxy = `http://${names.sidecar}:${SIDECAR_PROXY_PORT}`;
      const run = await step(
        [
          "run",
          "-d",
          "--rm",
          "--name",
          names.sandbox,
          "--network",
          names.internal,
          "--security-opt",
          "seccomp=unconfined",
          ...sandboxLabels(sandboxId, request.network, Date.now(), nonce),
          ...["-e", `HTTP_PROXY=${proxy}`, "-e", `HTTPS_PROXY=${proxy}`, "-e", `http_proxy=${proxy}`, "-e", `https_proxy=${proxy}`],
          ...["-e", "NO_PROXY=localhost,127.0.0.1", "-e", "no_proxy=localhost,127.0.0.1"],
          ...(await this.mountArgs(request)),
          ...this.runArgs,
          this.image,
        ],
        `start an AIO container from ${this.image}`,
      );
      const sandboxHandle = run.stdout.trim().split("\n").pop() ?? "";
      await step(
        [
          "run",
          "-d",
          "--rm",
          "--name",
          names.sidecar,
          "--network",
          names.egress,
          "-p",
          `${this.bindHost}::${SIDECAR_RELAY_PORT}`,
          ...labels,
          "--label",
          "antler.role=sidecar",
          "-e",
          "ANTLER_RELAY_TOKEN",
          "-e",
          `ANTLER_RELAY_UPSTREAM=http://${names.sandbox}:${AIO_CONTAINER_PORT}`,
          "-e",
          `ANTLER_EGRESS_POLICY=${JSON.stringify(policy)}`,
          this.sidecarImage,
        ],
        `start the egress sidecar from ${this.sidecarImage}`,
        { ANTLER_RELAY_TOKEN: token },
      );
      await step(["network", "connect", names.internal, names.sidecar], "connect the sidecar to the internal network");
      const instance = await this.relayInstance(sandboxId, sandboxHandle, token, policyLabelOf(request.network), signal);
      if (!instance) throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, `could not find the relay port of ${names.sidecar}`);
      return instance;
    } catch (error) {
      // Nothing half-made is left behind: whatever was created goes, and what cannot go is reported.
      await this.teardown(sandboxId).catch((e: unknown) => {
        throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, `starting restricted sandbox ${sandboxId} failed and its clean-up did too`, {
          hint: "Remove what is left by hand (docker ps -a / docker network ls, label antler.sandbox_id).",
          cause: e,
          details: { startError: String(error) },
        });
      });
      throw error;
    }
  }

  private relayToken(sandboxId: string, nonce: string): string {
    return createHmac("sha256", this.relaySecret).update(`${sandboxId}:${nonce}`).digest("hex");
  }

  private async relayInstance(
    sandboxId: string,
    handle: string,
    token: string,
    label: string,
    signal?: AbortSignal,
  ): Promise<SandboxInstance | undefined> {
    const port = await this.run(["port", dockerNames(sandboxId).sidecar, `${SIDECAR_RELAY_PORT}/tcp`], signal);
    const hostPort = port.ok ? parseHostPort(port.stdout) : null;
    if (hostPort === null) return undefined;
    const host = this.bindHost === "0.0.0.0" ? "127.0.0.1" : this.bindHost;
    return {
      sandboxId,
      baseUrl: `http://${host}:${hostPort}`,
      handle,
      headers: { [RELAY_TOKEN_HEADER]: token },
      network: { mode: "restricted", label },
      relay: { token },
    };
  }

  /** Read-only: `docker ps` of the sandbox container with this id. */
  async discover(sandboxId: string, signal?: AbortSignal): Promise<DiscoveredSandbox | undefined> {
    return (await this.list(["--filter", `label=antler.sandbox_id=${sandboxId}`], signal))[0];
  }

  /** Read-only: every Antler AIO sandbox container on the engine. */
  enumerate(signal?: AbortSignal): Promise<DiscoveredSandbox[]> {
    return this.list([], signal);
  }

  private async list(filters: string[], signal?: AbortSignal): Promise<DiscoveredSandbox[]> {
    await this.ensureEngine(signal);
    const format = ["antler.sandbox_id", "antler.network_mode", "antler.policy_label", "antler.created_at", "antler.relay_nonce"]
      .map((l) => `{{.Label "${l}"}}`)
      .join("\t");
    const result = await this.run(
      [
        "ps",
        "-a",
        "--filter",
        "label=antler.sandbox=aio",
        "--filter",
        "label=antler.role=sandbox",
        ...filters,
        "--format",
        `{{.ID}}\t${format}`,
      ],
      signal,
    );
    if (!result.ok) throw this.commandError("could not list AIO sandboxes", result, "Check `docker ps -a`.");
    return result.stdout
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => {
        const [handle = "", sandboxId = "", mode = "", label = "", created = "", nonce = ""] = line.split("\t");
        return {
          sandboxId,
          handle,
          networkMode: mode === "restricted" ? "restricted" : "open",
          policyLabel: label || "open",
          createdAt: Number(created) || 0,
          ...(nonce ? { nonce } : {}),
        } satisfies DiscoveredSandbox;
      });
  }

  async adopt(found: DiscoveredSandbox, signal?: AbortSignal): Promise<SandboxInstance | undefined> {
    if (found.networkMode === "restricted") {
      if (!found.nonce) return undefined;
      return this.relayInstance(found.sandboxId, found.handle, this.relayToken(found.sandboxId, found.nonce), found.policyLabel, signal);
    }
    const port = await this.run(["port", found.handle, `${AIO_CONTAINER_PORT}/tcp`], signal);
    const hostPort = port.ok ? parseHostPort(port.stdout) : null;
    if (hostPort === null) return undefined;
    const host = this.bindHost === "0.0.0.0" ? "127.0.0.1" : this.bindHost;
    return {
      sandboxId: found.sandboxId,
      baseUrl: `http://${host}:${hostPort}`,
      handle: found.handle,
      network: { mode: "open", label: "open" },
    };
  }

  /**
   * Removes the sandbox, its sidecar and both networks, in that order (a network cannot go while a container is on
   * it). Every step runs even after a failure; what could not be removed is named in the error, so the caller
   * retries it on its next sweep. Things already gone count as removed.
   */
  async teardown(sandboxId: string): Promise<void> {
    const names = dockerNames(sandboxId);
    const left: string[] = [];
    for (const [args, what] of [
      [["rm", "-f", names.sandbox], `container ${names.sandbox}`],
      [["rm", "-f", names.sidecar], `container ${names.sidecar}`],
      [["network", "rm", names.internal], `network ${names.internal}`],
      [["network", "rm", names.egress], `network ${names.egress}`],
    ] as const) {
      const result = await this.run([...args]);
      if (!result.ok && !/no such|not found/i.test(result.stderr))
        left.push(`${what} (${firstLine(result.stderr) || result.error || "failed"})`);
    }
    if (left.length > 0) {
      throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, `tearing down sandbox ${sandboxId} left ${left.join(", ")}`, {
        hint: "The provider retries on its next sweep; or remove them by hand with docker rm -f / docker network rm.",
        details: { sandboxId, left },
      });
    }
  }

  async destroy(instance: SandboxInstance): Promise<void> {
    if (instance.network?.mode === "restricted") return this.teardown(instance.sandboxId);
    const result = await this.run(["rm", "-f", instance.handle]);
    if (!result.ok && !/no such container/i.test(result.stderr)) {
      throw this.commandError(
        `could not remove container ${instance.handle.slice(0, 12)}`,
        result,
        "Remove it by hand with `docker rm -f`.",
      );
    }
  }

  private async run(
    args: string[],
    signal?: AbortSignal,
    timeoutMs = this.timeoutMs,
    env?: Record<string, string>,
  ): Promise<CommandResult> {
    // execa (about a hundred modules) loads with the first docker command, not with the plugin entry.
    const { execa } = await import("execa");
    const result = await execa(this.command, args, {
      reject: false,
      timeout: timeoutMs,
      stdin: "ignore",
      ...(env ? { env } : {}),
      ...(signal ? { cancelSignal: signal } : {}),
    });
    const stdout = typeof result.stdout === "string" ? result.stdout : "";
    const stderr = typeof result.stderr === "string" ? result.stderr : "";
    return {
      ok: !result.failed && result.exitCode === 0,
      exitCode: result.exitCode,
      stdout,
      stderr,
      // Set when the CLI could not run at all (not installed: ENOENT) or was stopped.
      error: result.failed && result.exitCode === undefined ? firstLine(result.shortMessage) : "",
    };
  }

  private commandError(what: string, result: CommandResult, hint: string): AntlerError {
    return new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, `${what}: ${firstLine(result.stderr) || result.error || "no output"}`, {
      where: "plugins[@antler/sandbox-aio].config.image",
      hint,
      details: { command: this.command, exitCode: result.exitCode ?? null },
    });
  }
}

interface CommandResult {
  ok: boolean;
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  error: string;
}

/** Labels of a sandbox container: what discovery reads back after a restart. */
function sandboxLabels(sandboxId: string, network: NetworkSettings | undefined, createdAt: number, nonce?: string): string[] {
  return [
    ...["--label", "antler.sandbox=aio", "--label", `antler.sandbox_id=${sandboxId}`, "--label", "antler.role=sandbox"],
    ...["--label", `antler.network_mode=${network?.mode ?? "open"}`, "--label", `antler.policy_label=${policyLabelOf(network)}`],
    ...["--label", `antler.created_at=${createdAt}`],
    ...(nonce ? ["--label", `antler.relay_nonce=${nonce}`] : []),
  ];
}

/** `docker port` prints one binding per line, e.g. `127.0.0.1:49153` or `[::]:49153`. */
export function parseHostPort(output: string): number | null {
  for (const line of output.split("\n")) {
    const match = /:(\d+)\s*$/.exec(line.trim());
    if (match?.[1]) return Number(match[1]);
  }
  return null;
}

function firstLine(text: string | undefined): string {
  return (text ?? "").trim().split("\n")[0]?.trim() ?? "";
}
