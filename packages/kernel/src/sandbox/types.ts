/**
 * The Sandbox contract: where an agent's commands run and its files live. Capability (the sandbox tools
 * plugin) is separate from substrate (providers: local, AIO, E2B). Every path in this contract is a virtual
 * path as the agent sees it: `/mnt/user-data/{workspace,uploads,outputs}`, plus read-only `/mnt/skills` and
 * `/mnt/acp-workspace`. Providers translate to their own storage and refuse anything that escapes.
 */
export interface ExecOptions {
  /** Extra environment for this command; merged over the provider's scrubbed base environment. */
  env?: Readonly<Record<string, string>>;
  /** Milliseconds; on expiry the whole process group is killed and `timedOut` is true. */
  timeout?: number;
  signal?: AbortSignal;
  /** Virtual working directory; default `/mnt/user-data/workspace`. */
  cwd?: string;
}

export interface ExecResult {
  /** `null` when the process was killed by a signal. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** The signal that ended the process, if any. */
  signal: string | null;
  durationMs: number;
}

export interface ReadOptions {
  /** 1-based, inclusive. */
  startLine?: number;
  /** 1-based, inclusive. */
  endLine?: number;
}

export interface WriteOptions {
  append?: boolean;
}

export interface FileEntry {
  /** Virtual path. */
  path: string;
  type: "file" | "directory" | "symlink";
  size: number;
  mtimeMs: number;
}

export interface GrepOptions {
  /** Virtual folder to search; default the workspace. */
  path?: string;
  /** Only files whose path matches this glob (e.g. `*.ts`). */
  glob?: string;
  ignoreCase?: boolean;
  /** Stop after this many matches. Default 200. */
  maxMatches?: number;
}

export interface GrepMatch {
  path: string;
  /** 1-based. */
  line: number;
  text: string;
}

export interface GlobOptions {
  /** Virtual folder the pattern is relative to; default the workspace. */
  path?: string;
  /** Stop after this many paths. Default 1000. */
  maxResults?: number;
}

export interface Sandbox {
  /** Stable id, e.g. `local:<thread>`; recorded in thread state. */
  readonly id: string;
  /** Changes when the machine behind `id` is replaced; set only where files live apart from the host folders. */
  readonly generation?: string;
  executeCommand(command: string, options?: ExecOptions): Promise<ExecResult>;
  /** Text content; lines `startLine..endLine` when given. */
  readFile(path: string, options?: ReadOptions): Promise<string>;
  /** Raw bytes (images, archives). */
  downloadFile(path: string): Promise<Uint8Array>;
  /** Entries under `path` down to `maxDepth` levels (1 = direct children). */
  listDir(path: string, maxDepth?: number): Promise<FileEntry[]>;
  writeFile(path: string, content: string, options?: WriteOptions): Promise<void>;
  /** Virtual paths of files matching `pattern`. */
  glob(pattern: string, options?: GlobOptions): Promise<string[]>;
  /** Lines matching the regular expression `pattern`. */
  grep(pattern: string, options?: GrepOptions): Promise<GrepMatch[]>;
  /** Replaces a file's bytes (binary-safe write). */
  updateFile(path: string, bytes: Uint8Array): Promise<void>;
}

export interface AcquireOptions {
  userId: string;
  signal?: AbortSignal;
}

export interface SandboxProvider {
  /** `sandbox.provider` in config.yaml picks a provider by this id: `local`, `aio`, `e2b`. */
  readonly id: string;
  /**
   * True when commands run isolated from the host (a container or a remote VM). Host bash (`bash` on a
   * non-isolating provider) stays off unless `sandbox.allow_host_bash` is set.
   */
  readonly isolated: boolean;
  /** The thread's sandbox, created or reused. Same (user, thread) → same sandbox id. */
  acquire(threadId: string, options: AcquireOptions): Promise<Sandbox>;
  /** A sandbox acquired earlier, by id, if it is still live. */
  get(id: string): Sandbox | undefined;
  /** Hands the sandbox back after a run; a pooled provider parks it warm. */
  release(id: string): Promise<void>;
  /** Drops every sandbox (tests, config reload). */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/** Virtual roots every provider understands. */
export const SANDBOX_VIRTUAL_ROOTS = {
  workspace: "/mnt/user-data/workspace",
  uploads: "/mnt/user-data/uploads",
  outputs: "/mnt/user-data/outputs",
  skills: "/mnt/skills",
  acpWorkspace: "/mnt/acp-workspace",
} as const;

/** Read-only virtual roots: writes and edits under them are refused. */
export const READ_ONLY_ROOTS: readonly string[] = [SANDBOX_VIRTUAL_ROOTS.skills, SANDBOX_VIRTUAL_ROOTS.acpWorkspace];
