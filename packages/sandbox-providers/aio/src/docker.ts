import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { AntlerError, ErrorCodes, threadPaths } from "@antler/kernel";
import { execa } from "execa";
import type { SandboxBackend, SandboxInstance, SandboxRequest } from "./backend.js";

/** The AIO sandbox image published by agent-infra (GitHub Container Registry). */
export const DEFAULT_AIO_IMAGE = "ghcr.io/agent-infra/sandbox:latest";
/** The port the AIO image serves its API on inside the container. */
export const AIO_CONTAINER_PORT = 8080;

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
  private engineChecked = false;

  constructor(options: DockerBackendOptions = {}) {
    this.image = options.image ?? DEFAULT_AIO_IMAGE;
    this.command = options.command ?? "docker";
    this.bindHost = options.bindHost ?? "127.0.0.1";
    this.runArgs = options.runArgs ?? [];
    this.timeoutMs = options.commandTimeoutMs ?? 120_000;
    this.threadMount = options.threadMount;
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
    const name = `antler-aio-${request.sandboxId}`;
    // A container left by a crashed process holds the deterministic name; it is this lease's own, so replace it.
    await this.run(["rm", "-f", name], request.signal);
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
        "--label",
        "antler.sandbox=aio",
        "--label",
        `antler.sandbox_id=${request.sandboxId}`,
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
    return { sandboxId: request.sandboxId, baseUrl: `http://${host}:${hostPort}`, handle: containerId };
  }

  async destroy(instance: SandboxInstance): Promise<void> {
    const result = await this.run(["rm", "-f", instance.handle]);
    if (!result.ok && !/no such container/i.test(result.stderr)) {
      throw this.commandError(
        `could not remove container ${instance.handle.slice(0, 12)}`,
        result,
        "Remove it by hand with `docker rm -f`.",
      );
    }
  }

  private async run(args: string[], signal?: AbortSignal, timeoutMs = this.timeoutMs): Promise<CommandResult> {
    const result = await execa(this.command, args, {
      reject: false,
      timeout: timeoutMs,
      stdin: "ignore",
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
