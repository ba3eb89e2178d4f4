import { mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { type AcquireOptions, AntlerError, ErrorCodes, type Sandbox, type SandboxProvider, threadPaths } from "@antler/kernel";
import { SandboxPathMap } from "./path-mapping.js";
import { killProcessGroup } from "./process-group.js";
import { LocalSandbox } from "./sandbox.js";

export interface LocalSandboxProviderOptions {
  /** Antler's data folder; thread folders live under `<baseDir>/users/<user>/threads/<thread>/`. */
  baseDir: string;
  /** Live sandboxes kept; the least recently acquired is dropped past this. Default 256. */
  maxSandboxes?: number;
  /** Shell that runs commands as `<shell> -c <command>`. Default `/bin/bash`. */
  shell?: string;
  /** Host folder behind read-only `/mnt/skills`. Default `<baseDir>/skills`. */
  skillsDir?: string;
  /**
   * The user's skill folders (`@antler/plugin-skills` provides them): `/mnt/skills/public` and `/mnt/skills/custom`
   * map to them, read-only, and `/mnt/skills` to the folder holding `custom`. Undefined keeps `skillsDir`.
   */
  skillMounts?: (userId: string) => { public: string; custom: string } | undefined;
  /** Timeout for commands that pass none, in ms. Default 600 000 (`sandbox.bash_command_timeout_seconds`). */
  defaultTimeoutMs?: number;
  /** Output kept per stream, in characters; past it the command is killed. Default 16 MiB. */
  maxOutputChars?: number;
  /** Environment commands inherit, before secrets are scrubbed. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The sandbox id of a (user, thread): `local:<user>/<thread>`. Ids are safe folder names, so `/` cannot be ambiguous. */
export function localSandboxId(userId: string, threadId: string): string {
  return `local:${userId}/${threadId}`;
}

/**
 * Runs each thread's commands on the host, in the thread's own folders, translating virtual paths both ways.
 * NOT an isolation boundary (`isolated: false`): commands run as the Antler process user. Host bash stays off
 * unless `sandbox.allow_host_bash` is set; use the AIO or E2B provider for untrusted code.
 */
export class LocalSandboxProvider implements SandboxProvider {
  readonly id = "local";
  readonly isolated = false;
  private readonly baseDir: string;
  private readonly maxSandboxes: number;
  private readonly shell: string;
  private readonly skillsDir: string;
  private readonly skillMounts: LocalSandboxProviderOptions["skillMounts"];
  private readonly defaultTimeoutMs: number;
  private readonly maxOutputChars: number;
  private readonly env: Readonly<Record<string, string | undefined>>;
  /** Insertion order is recency: a hit is moved to the end, eviction takes the first. */
  private readonly live = new Map<string, LocalSandbox>();
  /** Process groups of every command still running, whichever sandbox (live or evicted) started it. */
  private readonly running = new Set<number>();
  private closed = false;

  constructor(options: LocalSandboxProviderOptions) {
    this.baseDir = resolve(options.baseDir);
    this.maxSandboxes = options.maxSandboxes ?? 256;
    if (!Number.isInteger(this.maxSandboxes) || this.maxSandboxes < 1) {
      throw new AntlerError(ErrorCodes.CONFIG_INVALID, `max_sandboxes must be a positive integer, got ${this.maxSandboxes}`, {
        where: "@antler/sandbox-local: max_sandboxes",
      });
    }
    this.shell = options.shell ?? "/bin/bash";
    this.skillsDir = resolve(options.skillsDir ?? join(this.baseDir, "skills"));
    this.skillMounts = options.skillMounts;
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? 600_000;
    this.maxOutputChars = options.maxOutputChars ?? 16 * 1024 * 1024;
    this.env = options.env ?? process.env;
  }

  /** Live sandboxes, least recently acquired first. */
  get size(): number {
    return this.live.size;
  }

  async acquire(threadId: string, options: AcquireOptions): Promise<Sandbox> {
    if (this.closed) {
      throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, "the local sandbox provider is closed", {
        where: "sandbox local",
        hint: "Acquire sandboxes from a running kernel; this provider was closed with it.",
      });
    }
    if (options.signal?.aborted) {
      throw new AntlerError(ErrorCodes.RUN_CANCELLED, `acquiring the sandbox of thread ${JSON.stringify(threadId)} was cancelled`, {
        where: "sandbox local",
      });
    }
    const paths = threadPaths(this.baseDir, options.userId, threadId); // refuses unsafe ids (PATH_UNSAFE)
    const id = localSandboxId(paths.userId, paths.threadId);
    const existing = this.live.get(id);
    if (existing) {
      this.live.delete(id);
      this.live.set(id, existing);
      return existing;
    }
    await Promise.all([paths.workspace, paths.uploads, paths.outputs].map((dir) => mkdir(dir, { recursive: true })));
    const skills = this.skillMounts?.(paths.userId);
    const map = new SandboxPathMap(id, {
      userData: paths.userData,
      workspace: paths.workspace,
      uploads: paths.uploads,
      outputs: paths.outputs,
      skills: skills ? dirname(resolve(skills.custom)) : this.skillsDir,
      ...(skills ? { skillsPublic: resolve(skills.public), skillsCustom: resolve(skills.custom) } : {}),
      acpWorkspace: join(paths.threadDir, "acp-workspace"),
    });
    await map.learnRealPaths();
    // Two concurrent acquires of one thread: the first to finish wins, so both callers share one sandbox.
    const raced = this.live.get(id);
    if (raced) return raced;
    const sandbox = new LocalSandbox({
      id,
      paths: map,
      shell: this.shell,
      defaultTimeoutMs: this.defaultTimeoutMs,
      maxOutputChars: this.maxOutputChars,
      baseEnv: this.env,
      running: this.running,
    });
    this.live.set(id, sandbox);
    // An evicted sandbox is only forgotten, not stopped: it holds no resources and its commands finish normally.
    while (this.live.size > this.maxSandboxes) {
      const oldest = this.live.keys().next().value;
      if (oldest === undefined) break;
      this.live.delete(oldest);
    }
    return sandbox;
  }

  get(id: string): Sandbox | undefined {
    return this.live.get(id);
  }

  /** Nothing to park for a host folder: the sandbox stays live (and reusable) until evicted, reset or closed. */
  async release(_id: string): Promise<void> {}

  async reset(): Promise<void> {
    for (const pgid of this.running) killProcessGroup(pgid);
    this.running.clear();
    this.live.clear();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.reset();
  }
}
