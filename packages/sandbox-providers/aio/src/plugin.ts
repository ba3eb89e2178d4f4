import { AntlerError, definePlugin, ErrorCodes, type Token } from "@antler/kernel";
import type { SandboxBackend, SandboxMount } from "./backend.js";
import { type AioConfigInput, aioConfigSchema } from "./config.js";
import { DockerBackend } from "./docker.js";
import type { FetchLike } from "./http.js";
import { AioSandboxProvider } from "./provider.js";
import { ProvisionerBackend } from "./provisioner.js";
import { TeardownLeases } from "./teardown-lease.js";

const PLUGIN_NAME = "@antler/sandbox-aio";
const WHERE = `plugins[${PLUGIN_NAME}].config`;

export interface CreateAioProviderOptions {
  fetch?: FetchLike;
  logger?: { warn(obj: object, msg?: string): void };
  /** Milliseconds between provisioner status and readiness polls; default 500. */
  pollIntervalMs?: number;
  /** Antler's data folder; the docker backend mounts thread folders from here (`mount_thread_data`). */
  baseDir?: string;
  /** Host folders each user's sandbox shows read-only (the skills plugin's mounts). */
  mounts?: (userId: string) => readonly SandboxMount[];
  /** The cross-instance teardown lease store; the plugin opens it in the kernel's SQL store. */
  teardownLeases?: () => Promise<TeardownLeases>;
  instanceId?: string;
}

/** `@antler/plugin-skills`' mounts, by the registry key it provides them under (no dependency on that package). */
const SKILL_MOUNTS: Token<{ hostDirs(userId: string): { public: string; custom: string } }> = Object.freeze({
  key: Symbol.for("@antler/sandbox/skill-mounts"),
  name: "sandbox.skill-mounts",
});

/** Builds the `aio` provider from plugin config (validated here, defaults applied). Does no I/O. */
export function createAioProvider(input: AioConfigInput, options: CreateAioProviderOptions = {}): AioSandboxProvider {
  const parsed = aioConfigSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `invalid aio sandbox config: ${issue?.message ?? "unknown problem"}`, {
      where: `${WHERE}${issue?.path.length ? `.${issue.path.join(".")}` : ""}`,
      hint: "See the README of @antler/sandbox-aio for the config block.",
    });
  }
  const config = parsed.data;
  const kind = config.backend ?? (config.provisioner_url ? "provisioner" : "docker");
  // Mounted thread folders sit at their virtual paths unless container_root says otherwise.
  const mounted = kind === "docker" && config.mount_thread_data && options.baseDir !== undefined;
  const containerRoot = config.container_root ?? (mounted ? "/mnt" : undefined);
  let backend: SandboxBackend;
  if (kind === "provisioner") {
    backend = new ProvisionerBackend({
      baseUrl: config.provisioner_url as string,
      where: `${WHERE}.provisioner_url`,
      image: config.image,
      timeoutMs: config.request_timeout_seconds * 1000,
      ...(config.provisioner_api_key ? { apiKey: config.provisioner_api_key } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
    });
  } else {
    const root = config.container_root ?? "/mnt";
    backend = new DockerBackend({
      image: config.image,
      command: config.docker_command,
      runArgs: config.docker_run_args,
      sidecarImage: config.sidecar_image,
      ...(config.relay_secret ? { relaySecret: config.relay_secret } : {}),
      ...(mounted ? { threadMount: { baseDir: options.baseDir as string, root } } : {}),
    });
  }
  return new AioSandboxProvider({
    backend,
    replicas: config.replicas,
    idleTimeoutSeconds: config.idle_timeout_seconds,
    acquireTimeoutSeconds: config.acquire_timeout_seconds,
    requestTimeoutMs: config.request_timeout_seconds * 1000,
    sharesHostFolders: mounted,
    network: config.network,
    orphanGraceSeconds: config.orphan_grace_seconds,
    ...(options.teardownLeases ? { teardownLeases: options.teardownLeases } : {}),
    ...(options.instanceId ? { instanceId: options.instanceId } : {}),
    ...(containerRoot ? { containerRoot } : {}),
    ...(config.sandbox_api_key ? { sandboxApiKey: config.sandbox_api_key } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.pollIntervalMs !== undefined ? { readinessIntervalMs: options.pollIntervalMs } : {}),
    ...(options.mounts ? { mounts: options.mounts } : {}),
  });
}

/** Sandbox provider `aio`: agent-infra's all-in-one sandbox containers, remote (provisioner) or local (Docker). */
const aioSandboxPlugin = definePlugin({
  name: PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Sandbox provider `aio`: AIO sandbox containers from a provisioner or local Docker, with a warm pool and per-thread leases.",
  configSchema: aioConfigSchema,
  setup(ctx) {
    const mounts = (userId: string): SandboxMount[] => {
      const skills = ctx.services.tryResolve(SKILL_MOUNTS)?.hostDirs(userId);
      if (!skills) return [];
      return [
        { hostPath: skills.public, virtualPath: "/mnt/skills/public", readOnly: true },
        { hostPath: skills.custom, virtualPath: "/mnt/skills/custom", readOnly: true },
      ];
    };
    const teardownLeases = () => TeardownLeases.open((migrations) => ctx.storage.openDatabase({ migrations }));
    ctx.sandbox.addProvider(createAioProvider(ctx.config, { logger: ctx.logger, baseDir: ctx.paths.baseDir, mounts, teardownLeases }));
  },
});

export default aioSandboxPlugin;
