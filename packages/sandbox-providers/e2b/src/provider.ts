import type { Dirent } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join, posix } from "node:path";
import {
  type AcquireOptions,
  AntlerError,
  ErrorCodes,
  type Logger,
  type SandboxProvider,
  type ThreadPaths,
  threadPaths,
  VIRTUAL_DIRS,
} from "@antler/kernel";
import { E2B_API_KEY_ENV, type E2BConfig } from "./config.js";
import { SYNC_MANIFEST_FILE } from "./manifest.js";
import { type OutputSyncReport, type SyncLimits, syncOutputs } from "./output-sync.js";
import type { E2BRemote, RemoteSandbox } from "./remote.js";
import { E2BSandbox } from "./sandbox.js";
import { createSdkRemote, type SdkRemoteOptions } from "./sdk-remote.js";

export const E2B_PROVIDER_ID = "e2b";

const BOOTSTRAP_TIMEOUT_MS = 30_000;
const USER_DATA_DIRS = [VIRTUAL_DIRS.workspace, VIRTUAL_DIRS.uploads, VIRTUAL_DIRS.outputs];
/**
 * Run as root because `/mnt` belongs to root in E2B templates; the folders are opened up so that commands
 * running as the template's default user can write to them. Idempotent, so it doubles as the health check
 * of a parked sandbox.
 */
export const BOOTSTRAP_COMMAND = `mkdir -p ${USER_DATA_DIRS.join(" ")} && chmod 777 ${USER_DATA_DIRS.join(" ")}`;

export interface E2BProviderOptions {
  config: E2BConfig;
  /** Antler's data folder; outputs land in `<baseDir>/users/<user>/threads/<thread>/user-data/outputs`. */
  baseDir: string;
  logger: Logger;
  /** Where `E2B_API_KEY` is looked up. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * The remote to use: an `E2BRemote`, or a factory given the resolved connection settings. Default: the
   * `e2b` SDK. A factory (or the default) needs an API key; a ready remote does not.
   */
  remote?: E2BRemote | ((connection: SdkRemoteOptions) => E2BRemote);
  /** Clock for sync deadlines. */
  now?: () => number;
  /** Where to place the config in messages, e.g. `plugins[2].config`. */
  where?: string;
  /**
   * Host folders each user's sandbox shows at virtual paths (the skills plugin's `/mnt/skills/{public,custom}`):
   * uploaded into a new sandbox after its bootstrap, bounded by `MOUNT_UPLOAD_LIMITS`. The file tools keep them
   * read-only.
   */
  mounts?: (userId: string) => ReadonlyArray<{ hostPath: string; virtualPath: string }>;
}

/** A mount bigger than this is uploaded up to the limit and the rest is logged as left out. */
export const MOUNT_UPLOAD_LIMITS = { maxFiles: 2000, maxBytes: 64 * 1024 * 1024 };

interface Lease {
  paths: ThreadPaths;
  sandbox: E2BSandbox;
}

/** The id a thread's sandbox keeps across remote sandboxes (reclaims, replacements, resets): `e2b:<user>/<thread>`. */
export function e2bSandboxId(userId: string, threadId: string): string {
  return `${E2B_PROVIDER_ID}:${userId}/${threadId}`;
}

/**
 * Sandbox provider `e2b`: one remote E2B sandbox per (user, thread).
 *
 * - acquire: the thread's live sandbox; else its parked one, re-bootstrapped (a broken one is killed and
 *   acquisition goes on with a fresh sandbox); else a new one, bootstrapped (failure kills it and raises).
 * - release: syncs `/mnt/user-data/outputs` to the host outputs folder, then parks the sandbox (up to
 *   `pool_size`, oldest evicted and killed) or kills it.
 */
export class E2BSandboxProvider implements SandboxProvider {
  readonly id = E2B_PROVIDER_ID;
  readonly isolated = true;

  private readonly options: E2BProviderOptions;
  private readonly logger: Logger;
  private remoteClient: E2BRemote | null = null;
  /** Keyed by the thread-stable sandbox id. */
  private readonly active = new Map<string, Lease>();
  /** Insertion order is park order: the first entry is evicted first. */
  private readonly parked = new Map<string, Lease>();
  private readonly pending = new Map<string, Promise<E2BSandbox>>();
  private readonly releasing = new Map<string, Promise<void>>();
  private closed = false;

  constructor(options: E2BProviderOptions) {
    this.options = options;
    this.logger = options.logger;
  }

  async acquire(threadId: string, options: AcquireOptions): Promise<E2BSandbox> {
    if (this.closed) {
      throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, "the e2b sandbox provider is closed", { where: this.where() });
    }
    const paths = threadPaths(this.options.baseDir, options.userId, threadId);
    const key = e2bSandboxId(paths.userId, paths.threadId);
    await this.releasing.get(key);
    const live = this.active.get(key);
    if (live) return live.sandbox;
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const attempt = this.acquireFresh(key, paths, options.signal).finally(() => this.pending.delete(key));
    this.pending.set(key, attempt);
    return attempt;
  }

  get(id: string): E2BSandbox | undefined {
    return this.active.get(id)?.sandbox;
  }

  async release(id: string): Promise<void> {
    const lease = this.active.get(id);
    if (!lease) return;
    this.active.delete(id);
    const done = this.finishLease(lease, !this.closed && this.options.config.pool_size > 0).finally(() => this.releasing.delete(id));
    this.releasing.set(id, done);
    await done;
  }

  /** Mirrors a live sandbox's outputs to the host now (release does this too). */
  async syncOutputs(id: string): Promise<OutputSyncReport> {
    const lease = this.active.get(id);
    if (!lease) {
      throw new AntlerError(ErrorCodes.SANDBOX_NOT_FOUND, `sandbox ${id} is not live in the e2b provider`, { where: this.where() });
    }
    return this.sync(lease);
  }

  async reset(): Promise<void> {
    await Promise.all([...this.pending.values()].map((p) => p.catch(() => undefined)));
    await Promise.all([...this.active.keys()].map((id) => this.release(id)));
    await Promise.all([...this.releasing.values()]);
    const parked = [...this.parked.values()];
    this.parked.clear();
    await Promise.all(parked.map((lease) => this.kill(lease.sandbox.remote, "reset")));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.reset();
  }

  /** Sandbox ids (thread-stable) of the sandboxes parked warm, oldest first (diagnostics and tests). */
  parkedIds(): string[] {
    return [...this.parked.values()].map((lease) => lease.sandbox.id);
  }

  private async acquireFresh(key: string, paths: ThreadPaths, signal: AbortSignal | undefined): Promise<E2BSandbox> {
    const remote = this.remote();
    const parked = this.parked.get(key);
    if (parked) {
      this.parked.delete(key);
      try {
        await this.bootstrap(parked.sandbox.remote);
        return this.activate(paths, parked.sandbox);
      } catch (err) {
        // A parked sandbox can expire or break while it waits; the thread gets a fresh one instead.
        this.logger.warn(
          { sandboxId: parked.sandbox.remote.sandboxId, err: (err as Error).message },
          "e2b: parked sandbox failed its bootstrap check; discarding it and creating a new one",
        );
        await this.kill(parked.sandbox.remote, "broken parked sandbox");
      }
    }

    let created: RemoteSandbox;
    try {
      created = await remote.create({
        template: this.options.config.template,
        timeoutMs: this.options.config.timeout_seconds * 1000,
        metadata: { antler_user: paths.userId, antler_thread: paths.threadId },
        signal,
      });
    } catch (err) {
      throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, `cannot create an E2B sandbox: ${(err as Error)?.message ?? String(err)}`, {
        where: this.where(),
        cause: err,
        hint: "Check api_key, api_url/domain and template, and that your E2B account has sandbox capacity left.",
      });
    }
    try {
      await this.bootstrap(created);
      await this.uploadMounts(created, paths.userId);
    } catch (err) {
      await this.kill(created, "failed bootstrap");
      throw new AntlerError(
        ErrorCodes.SANDBOX_UNAVAILABLE,
        `E2B sandbox ${created.sandboxId} failed its bootstrap and was killed: ${(err as Error).message}`,
        {
          where: this.where(),
          cause: err,
          hint: "The template must provide sh, mkdir and chmod and allow running commands as root.",
          details: { sandboxId: created.sandboxId },
        },
      );
    }
    return this.activate(paths, new E2BSandbox(key, created));
  }

  private activate(paths: ThreadPaths, sandbox: E2BSandbox): E2BSandbox {
    this.active.set(sandbox.id, { paths, sandbox });
    return sandbox;
  }

  /** Copies each mount's regular files (never following links) to its virtual path in the remote sandbox. */
  private async uploadMounts(remote: RemoteSandbox, userId: string): Promise<void> {
    let files = 0;
    let bytes = 0;
    for (const mount of this.options.mounts?.(userId) ?? []) {
      const walk = async (dir: string, rel: string): Promise<void> => {
        let entries: Dirent[];
        try {
          entries = await readdir(dir, { withFileTypes: true });
        } catch {
          return; // a mount that does not exist (no custom skills yet) uploads nothing
        }
        for (const entry of entries) {
          const path = join(dir, entry.name);
          const target = posix.join(mount.virtualPath, rel, entry.name);
          if (entry.isDirectory()) await walk(path, posix.join(rel, entry.name));
          else if (entry.isFile()) {
            const content = await readFile(path);
            if (files + 1 > MOUNT_UPLOAD_LIMITS.maxFiles || bytes + content.length > MOUNT_UPLOAD_LIMITS.maxBytes) {
              this.logger.warn({ path: target }, "e2b: mount upload limit reached; file left out");
              continue;
            }
            files++;
            bytes += content.length;
            await remote.writeFile(target, content);
          }
        }
      };
      await walk(mount.hostPath, "");
    }
  }

  private async bootstrap(remote: RemoteSandbox): Promise<void> {
    const result = await remote.run(BOOTSTRAP_COMMAND, { user: "root", timeoutMs: BOOTSTRAP_TIMEOUT_MS });
    if (result.timedOut) throw new Error(`bootstrap timed out after ${BOOTSTRAP_TIMEOUT_MS} ms`);
    if (result.exitCode !== 0) throw new Error(`bootstrap exited with ${result.exitCode}: ${result.stderr.trim() || result.stdout.trim()}`);
  }

  private async finishLease(lease: Lease, park: boolean): Promise<void> {
    try {
      await this.sync(lease);
    } catch (err) {
      // Release must not fail the run; the manifest is untouched, so the next release retries.
      this.logger.error(
        { sandboxId: lease.sandbox.id, remoteId: lease.sandbox.remote.sandboxId, err: (err as Error).message },
        "e2b: output sync failed on release",
      );
    }
    if (!park) {
      await this.kill(lease.sandbox.remote, "released");
      return;
    }
    this.parked.set(lease.sandbox.id, lease);
    while (this.parked.size > this.options.config.pool_size) {
      const [oldestKey, oldest] = this.parked.entries().next().value as [string, Lease];
      this.parked.delete(oldestKey);
      await this.kill(oldest.sandbox.remote, "evicted from the warm pool");
    }
  }

  private sync(lease: Lease): Promise<OutputSyncReport> {
    const { config } = this.options;
    const limits: SyncLimits = {
      maxFileBytes: config.max_file_bytes,
      maxTotalBytes: config.max_total_bytes,
      maxFiles: config.max_files,
      deadlineMs: config.deadline_ms,
    };
    return syncOutputs({
      remote: lease.sandbox.remote,
      hostDir: lease.paths.outputs,
      manifestPath: join(lease.paths.threadDir, SYNC_MANIFEST_FILE),
      limits,
      logger: this.logger,
      ...(this.options.now ? { now: this.options.now } : {}),
    });
  }

  private async kill(remote: RemoteSandbox, why: string): Promise<void> {
    try {
      await remote.kill();
    } catch (err) {
      this.logger.warn({ sandboxId: remote.sandboxId, why, err: (err as Error)?.message }, "e2b: killing the remote sandbox failed");
    }
  }

  private remote(): E2BRemote {
    if (this.remoteClient) return this.remoteClient;
    const given = this.options.remote;
    if (given !== undefined && typeof given !== "function") {
      this.remoteClient = given;
      return given;
    }
    const { config } = this.options;
    const apiKey = config.api_key ?? (this.options.env ?? process.env)[E2B_API_KEY_ENV];
    if (!apiKey) {
      throw new AntlerError(ErrorCodes.CONFIG_ENV_MISSING, `no E2B API key: ${E2B_API_KEY_ENV} is not set and api_key is not configured`, {
        where: `${this.where()}.api_key`,
        hint: `Export ${E2B_API_KEY_ENV} (from https://e2b.dev/dashboard?tab=keys) or set api_key: \${${E2B_API_KEY_ENV}} in the plugin config.`,
      });
    }
    const connection: SdkRemoteOptions = {
      apiKey,
      apiUrl: config.api_url,
      sandboxUrl: config.sandbox_url,
      domain: config.domain,
      requestTimeoutMs: config.request_timeout_ms,
    };
    this.remoteClient = (given ?? createSdkRemote)(connection);
    return this.remoteClient;
  }

  private where(): string {
    return this.options.where ?? "@antler/sandbox-e2b config";
  }
}
