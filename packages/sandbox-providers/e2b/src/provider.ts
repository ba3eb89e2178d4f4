import { readdir, readFile, stat } from "node:fs/promises";
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
import { SANDBOX_SYNC_LEDGER_FILE } from "./ledger.js";
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

/**
 * Who the remote sandboxes belong to, for providers that reuse this one over another vendor's API (BoxLite,
 * Tenki): the provider id (`sandbox.provider`, the sandbox id prefix), the name in logs and errors, and the hint
 * given when creating a sandbox fails. Default: E2B's.
 */
export interface RemoteSandboxService {
  readonly id: string;
  readonly label: string;
  readonly createHint: string;
}

export const E2B_SERVICE: RemoteSandboxService = Object.freeze({
  id: E2B_PROVIDER_ID,
  label: "E2B",
  createHint: "Check api_key, api_url/domain and template, and that your E2B account has sandbox capacity left.",
});

export interface E2BProviderOptions {
  config: E2BConfig;
  /** The vendor behind `remote`, when it is not E2B. */
  service?: RemoteSandboxService;
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
   * More host folders each user's sandbox shows at virtual paths (the skills plugin's `/mnt/skills/{public,custom}`):
   * pushed with the thread's uploads on every acquire (new or changed files only). The file tools keep them read-only.
   */
  mounts?: (userId: string) => ReadonlyArray<{ hostPath: string; virtualPath: string }>;
}

interface Lease {
  paths: ThreadPaths;
  sandbox: E2BSandbox;
  /** What was uploaded into this remote sandbox, by remote path: `size:mtimeMs` of the host file then. */
  pushed: Map<string, string>;
  /** Serializes pushes, so two acquires of a live sandbox do not upload the same files twice. */
  pushing: Promise<void>;
}

/**
 * Host folders copied into the VM (host → remote, the remote copy read-only by convention): the thread's uploads.
 * A later read-only mount (e.g. `/mnt/skills`) is one more entry here.
 */
export interface HostMount {
  host: string;
  remote: string;
}

export function hostMounts(paths: ThreadPaths): HostMount[] {
  return [{ host: paths.uploads, remote: VIRTUAL_DIRS.uploads }];
}

/** Most files and bytes pushed per mount per acquire; the rest waits for the next acquire. */
const PUSH_MAX_FILES = 1000;

/** Labels stored with each remote sandbox; a restarted provider finds the thread's sandbox by them. */
export function threadMetadata(paths: { userId: string; threadId: string }): Record<string, string> {
  return { antler_user: paths.userId, antler_thread: paths.threadId };
}

/** Regular files under `dir` (symlinks are not followed), with a change stamp, at most `max`. */
async function listHostFiles(dir: string, max: number): Promise<Array<{ rel: string; stamp: string; host: string }>> {
  const out: Array<{ rel: string; stamp: string; host: string }> = [];
  const walk = async (folder: string, rel: string): Promise<void> => {
    for (const dirent of await readdir(folder, { withFileTypes: true })) {
      if (out.length >= max) return;
      const host = join(folder, dirent.name);
      const childRel = rel === "" ? dirent.name : `${rel}/${dirent.name}`;
      if (dirent.isDirectory()) await walk(host, childRel);
      else if (dirent.isFile()) {
        const info = await stat(host);
        out.push({ rel: childRel, stamp: `${info.size}:${info.mtimeMs}`, host });
      }
    }
  };
  await walk(dir, "");
  return out;
}

/** The id a thread's sandbox keeps across remote sandboxes (reclaims, replacements, resets): `e2b:<user>/<thread>`. */
export function e2bSandboxId(userId: string, threadId: string, providerId: string = E2B_PROVIDER_ID): string {
  return `${providerId}:${userId}/${threadId}`;
}

/**
 * Sandbox provider `e2b`: one remote E2B sandbox per (user, thread).
 *
 * - acquire: the thread's live sandbox; else its parked one, re-bootstrapped (a broken one is killed and
 *   acquisition goes on with a fresh sandbox); else its running one from before a restart, found by metadata
 *   (`antler_user`, `antler_thread`) through the E2B API; else a new one, bootstrapped (failure kills it and
 *   raises). Every acquire uploads new or changed files of the thread's uploads folder into the VM.
 * - release: syncs `/mnt/user-data/outputs` to the host outputs folder, then parks the sandbox (up to
 *   `pool_size`, oldest evicted and killed) or kills it.
 */
export class E2BSandboxProvider implements SandboxProvider {
  readonly id: string;
  readonly isolated = true;

  private readonly options: E2BProviderOptions;
  private readonly service: RemoteSandboxService;
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
    this.service = options.service ?? E2B_SERVICE;
    this.id = this.service.id;
  }

  async acquire(threadId: string, options: AcquireOptions): Promise<E2BSandbox> {
    if (this.closed) {
      throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, `the ${this.id} sandbox provider is closed`, { where: this.where() });
    }
    const paths = threadPaths(this.options.baseDir, options.userId, threadId);
    const key = e2bSandboxId(paths.userId, paths.threadId, this.id);
    await this.releasing.get(key);
    const live = this.active.get(key);
    if (live) {
      // Files the user uploaded while the sandbox was live (a second run on the thread) reach it now.
      await this.push(live);
      return live.sandbox;
    }
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
      throw new AntlerError(ErrorCodes.SANDBOX_NOT_FOUND, `sandbox ${id} is not live in the ${this.id} provider`, { where: this.where() });
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
        return await this.activate(paths, parked.sandbox, parked.pushed);
      } catch (err) {
        // A parked sandbox can expire or break while it waits; the thread gets a fresh one instead.
        this.logger.warn(
          { sandboxId: parked.sandbox.remote.sandboxId, err: (err as Error).message },
          `${this.id}: parked sandbox failed its bootstrap check; discarding it and creating a new one`,
        );
        await this.kill(parked.sandbox.remote, "broken parked sandbox");
      }
    }

    const found = await this.reattach(remote, paths, signal);
    if (found) return this.activate(paths, new E2BSandbox(key, found), new Map());

    let created: RemoteSandbox;
    try {
      created = await remote.create({
        template: this.options.config.template,
        timeoutMs: this.options.config.timeout_seconds * 1000,
        metadata: threadMetadata(paths),
        signal,
      });
    } catch (err) {
      throw new AntlerError(
        ErrorCodes.SANDBOX_UNAVAILABLE,
        `cannot create a${/^[AEIOU]/.test(this.service.label) ? "n" : ""} ${this.service.label} sandbox: ${(err as Error)?.message ?? String(err)}`,
        {
          where: this.where(),
          cause: err,
          hint: this.service.createHint,
        },
      );
    }
    try {
      await this.bootstrap(created);
    } catch (err) {
      await this.kill(created, "failed bootstrap");
      throw new AntlerError(
        ErrorCodes.SANDBOX_UNAVAILABLE,
        `${this.service.label} sandbox ${created.sandboxId} failed its bootstrap and was killed: ${(err as Error).message}`,
        {
          where: this.where(),
          cause: err,
          hint: "The template must provide sh, mkdir and chmod and allow running commands as root.",
          details: { sandboxId: created.sandboxId },
        },
      );
    }
    return this.activate(paths, new E2BSandbox(key, created), new Map());
  }

  /**
   * The thread's running sandbox from before a restart (or from another process), found by its metadata through
   * the E2B API, connected and re-bootstrapped; `null` when there is none or none can be reattached. One that
   * cannot (it does not connect, or fails the bootstrap) is killed: it is labelled for this thread, nothing can use
   * it again, and left running it would bill until its timeout. An acquire cancelled midway kills nothing.
   */
  private async reattach(remote: E2BRemote, paths: ThreadPaths, signal: AbortSignal | undefined): Promise<RemoteSandbox | null> {
    let ids: string[];
    try {
      ids = await remote.find(threadMetadata(paths), { signal });
    } catch (err) {
      this.logger.warn(
        { thread_id: paths.threadId, err: (err as Error)?.message },
        `${this.id}: listing sandboxes by metadata failed; creating one`,
      );
      return null;
    }
    for (const id of ids) {
      let connected: RemoteSandbox | undefined;
      try {
        connected = await remote.connect(id, { timeoutMs: this.options.config.timeout_seconds * 1000, signal });
        await this.bootstrap(connected);
        this.logger.info({ sandboxId: id, thread_id: paths.threadId }, `${this.id}: reattached to the thread's running sandbox`);
        return connected;
      } catch (err) {
        // Cancelled, not broken: the sandbox may be fine, and the acquire is over anyway.
        if (signal?.aborted) return null;
        this.logger.warn(
          { sandboxId: id, err: (err as Error)?.message },
          `${this.id}: a sandbox listed for this thread could not be reattached; discarding it`,
        );
        if (connected) await this.kill(connected, "not reattachable");
        else await this.killById(remote, id, "not reattachable");
      }
    }
    return null;
  }

  private async activate(paths: ThreadPaths, sandbox: E2BSandbox, pushed: Map<string, string>): Promise<E2BSandbox> {
    const lease: Lease = { paths, sandbox, pushed, pushing: Promise.resolve() };
    await this.push(lease);
    this.active.set(sandbox.id, lease);
    return sandbox;
  }

  /** Uploads new or changed files of the host mounts into the VM. A failure is logged; the next acquire retries. */
  private push(lease: Lease): Promise<void> {
    const run = lease.pushing.then(async () => {
      const extra = (this.options.mounts?.(lease.paths.userId) ?? []).map((m) => ({ host: m.hostPath, remote: m.virtualPath }));
      for (const mount of [...hostMounts(lease.paths), ...extra]) {
        let files: Array<{ rel: string; stamp: string; host: string }>;
        try {
          files = await listHostFiles(mount.host, PUSH_MAX_FILES);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
          throw err;
        }
        for (const file of files) {
          const remotePath = posix.join(mount.remote, file.rel);
          if (lease.pushed.get(remotePath) === file.stamp) continue;
          await lease.sandbox.remote.writeFile(remotePath, new Uint8Array(await readFile(file.host)));
          lease.pushed.set(remotePath, file.stamp);
        }
      }
    });
    lease.pushing = run.catch((err: unknown) => {
      this.logger.warn(
        { sandboxId: lease.sandbox.id, err: (err as Error)?.message },
        `${this.id}: uploading host files into the sandbox failed`,
      );
    });
    return lease.pushing;
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
        `${this.id}: output sync failed on release`,
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
      ledgerPath: join(lease.paths.threadDir, SANDBOX_SYNC_LEDGER_FILE),
      limits,
      logger: this.logger,
      ...(this.options.now ? { now: this.options.now } : {}),
    });
  }

  private async kill(remote: RemoteSandbox, why: string): Promise<void> {
    try {
      await remote.kill();
    } catch (err) {
      this.logger.warn({ sandboxId: remote.sandboxId, why, err: (err as Error)?.message }, `${this.id}: killing the remote sandbox failed`);
    }
  }

  private async killById(remote: E2BRemote, sandboxId: string, why: string): Promise<void> {
    try {
      await remote.kill(sandboxId);
    } catch (err) {
      this.logger.warn({ sandboxId, why, err: (err as Error)?.message }, `${this.id}: killing the remote sandbox failed`);
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
