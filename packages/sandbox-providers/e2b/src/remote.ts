/**
 * The one seam between this package and E2B. The provider, the sandbox and the output sync talk only to these
 * interfaces; `createSdkRemote` implements them over the `e2b` SDK and `createFolderRemote` over a host folder
 * (for tests and local development). Paths are absolute paths inside the remote sandbox.
 */

export interface RemoteCreateOptions {
  /** E2B template name or id. */
  template?: string | undefined;
  /** Lifetime of the remote sandbox; E2B kills it when this runs out. */
  timeoutMs: number;
  /** Labels stored with the remote sandbox (who it belongs to). */
  metadata?: Readonly<Record<string, string>>;
  signal?: AbortSignal | undefined;
}

export interface RemoteConnectOptions {
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface RemoteRunOptions {
  /** Milliseconds before the command is abandoned and reported as timed out. */
  timeoutMs?: number | undefined;
  env?: Readonly<Record<string, string>> | undefined;
  /** Absolute remote working directory. */
  cwd?: string | undefined;
  /** Remote user; the template's default user when unset. */
  user?: "root" | "user" | undefined;
  signal?: AbortSignal | undefined;
}

export interface RemoteRunResult {
  /** `null` when the command did not finish (timed out or was cut off). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface RemoteEntry {
  /** Absolute remote path. */
  path: string;
  type: "file" | "dir" | "symlink";
  size: number;
  /** Modification time as the remote reports it, `null` when it reports none. */
  mtimeMs: number | null;
}

export interface RemoteReadOptions {
  signal?: AbortSignal | undefined;
}

export interface RemoteInfo {
  sandboxId: string;
  templateId: string;
  state: "running" | "paused";
  startedAt: Date;
  endAt: Date;
}

/** One live remote sandbox. */
export interface RemoteSandbox {
  readonly sandboxId: string;
  /** Runs a shell command and waits for it. A non-zero exit is a result, not an error. */
  run(command: string, options?: RemoteRunOptions): Promise<RemoteRunResult>;
  readFile(path: string, options?: RemoteReadOptions): Promise<Uint8Array>;
  /** Creates parent folders as needed; overwrites. */
  writeFile(path: string, bytes: Uint8Array): Promise<void>;
  /** Entries under `path` (not `path` itself) down to `depth` levels. Throws when `path` does not exist. */
  list(path: string, depth: number): Promise<RemoteEntry[]>;
  remove(path: string): Promise<void>;
  getInfo(): Promise<RemoteInfo>;
  /** Ends the remote sandbox. True when it existed. */
  kill(): Promise<boolean>;
}

/** Creates and reattaches remote sandboxes. */
export interface E2BRemote {
  create(options: RemoteCreateOptions): Promise<RemoteSandbox>;
  connect(sandboxId: string, options?: RemoteConnectOptions): Promise<RemoteSandbox>;
  /** Ends a remote sandbox by id. True when it existed. */
  kill(sandboxId: string): Promise<boolean>;
  /** Ids of the running remote sandboxes whose metadata has every given key and value, newest first. */
  find(metadata: Readonly<Record<string, string>>, options?: { signal?: AbortSignal | undefined }): Promise<string[]>;
}
