import { posix } from "node:path";
import {
  AntlerError,
  ErrorCodes,
  type ExecOptions,
  type ExecResult,
  type FileEntry,
  type GlobOptions,
  type GrepMatch,
  type GrepOptions,
  isAntlerError,
  READ_ONLY_ROOTS,
  type ReadOptions,
  SANDBOX_VIRTUAL_ROOTS,
  type Sandbox,
  VIRTUAL_DIRS,
  VIRTUAL_ROOT,
  type WriteOptions,
} from "@antler/kernel";
import type { RemoteEntry, RemoteSandbox } from "./remote.js";

const DEFAULT_COMMAND_TIMEOUT_MS = 600_000;
const DEEP_LIST = 32;
const GREP_MAX_FILE_BYTES = 2 * 1024 * 1024;
const GREP_MAX_FILES = 2000;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The `Sandbox` contract over one remote E2B sandbox. Virtual paths are used as remote paths unchanged: the
 * bootstrap creates `/mnt/user-data/{workspace,uploads,outputs}` inside the VM. File tools are confined to
 * `/mnt/user-data`; the shell is not (it runs inside the VM, which is the isolation boundary).
 */
export class E2BSandbox implements Sandbox {
  readonly id: string;
  readonly remote: RemoteSandbox;

  /** The remote sandbox behind the thread-stable id: a replacement VM is a new generation. */
  get generation(): string {
    return this.remote.sandboxId;
  }

  /** `id` is thread-stable (`e2b:<user>/<thread>`); the remote sandbox behind it can change. */
  constructor(id: string, remote: RemoteSandbox) {
    this.id = id;
    this.remote = remote;
  }

  async executeCommand(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const cwd = this.remotePath(options.cwd ?? VIRTUAL_DIRS.workspace, "read");
    for (const name of Object.keys(options.env ?? {})) {
      if (!ENV_NAME.test(name)) {
        throw new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, `environment variable name ${JSON.stringify(name)} is not a POSIX name`, {
          where: this.id,
          hint: "Use letters, digits and '_', not starting with a digit.",
        });
      }
    }
    options.signal?.throwIfAborted();
    const started = Date.now();
    try {
      const result = await this.remote.run(command, {
        cwd,
        timeoutMs: options.timeout ?? DEFAULT_COMMAND_TIMEOUT_MS,
        env: options.env,
        signal: options.signal,
      });
      return {
        exitCode: result.timedOut ? null : result.exitCode,
        stdout: result.stdout,
        stderr: result.stderr,
        timedOut: result.timedOut,
        signal: result.timedOut ? "SIGKILL" : null,
        durationMs: Date.now() - started,
      };
    } catch (err) {
      throw this.failure("command failed to run", cwd, err);
    }
  }

  async readFile(path: string, options: ReadOptions = {}): Promise<string> {
    const text = new TextDecoder().decode(await this.downloadFile(path));
    if (options.startLine === undefined && options.endLine === undefined) return text;
    const lines = text.split("\n");
    const start = Math.max(1, options.startLine ?? 1);
    const end = Math.min(lines.length, options.endLine ?? lines.length);
    return lines.slice(start - 1, end).join("\n");
  }

  async downloadFile(path: string): Promise<Uint8Array> {
    const remotePath = this.remotePath(path, "read");
    try {
      return await this.remote.readFile(remotePath);
    } catch (err) {
      throw this.failure("cannot read file", remotePath, err);
    }
  }

  async listDir(path: string, maxDepth = 2): Promise<FileEntry[]> {
    const remotePath = this.remotePath(path, "read");
    const entries = await this.list(remotePath, Math.max(1, maxDepth));
    return entries.map(toFileEntry);
  }

  async writeFile(path: string, content: string, options: WriteOptions = {}): Promise<void> {
    const remotePath = this.remotePath(path, "write");
    let bytes = new TextEncoder().encode(content);
    if (options.append) {
      const existing = await this.remote.readFile(remotePath).catch(() => new Uint8Array());
      const joined = new Uint8Array(existing.byteLength + bytes.byteLength);
      joined.set(existing, 0);
      joined.set(bytes, existing.byteLength);
      bytes = joined;
    }
    await this.write(remotePath, bytes);
  }

  async updateFile(path: string, bytes: Uint8Array): Promise<void> {
    await this.write(this.remotePath(path, "write"), bytes);
  }

  async glob(pattern: string, options: GlobOptions = {}): Promise<string[]> {
    const base = this.remotePath(options.path ?? VIRTUAL_DIRS.workspace, "read");
    const matcher = globToRegExp(pattern);
    const max = options.maxResults ?? 1000;
    const out: string[] = [];
    for (const entry of await this.list(base, DEEP_LIST)) {
      if (entry.type !== "file") continue;
      if (matcher.test(posix.relative(base, entry.path))) out.push(entry.path);
      if (out.length >= max) break;
    }
    return out.sort();
  }

  async grep(pattern: string, options: GrepOptions = {}): Promise<GrepMatch[]> {
    let regex: RegExp;
    try {
      regex = new RegExp(pattern, options.ignoreCase ? "i" : "");
    } catch (err) {
      throw new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, `grep pattern ${JSON.stringify(pattern)} is not a valid regular expression`, {
        where: this.id,
        cause: err,
        hint: "Escape regex metacharacters or fix the pattern.",
      });
    }
    const base = this.remotePath(options.path ?? VIRTUAL_DIRS.workspace, "read");
    const fileFilter = options.glob !== undefined ? globToRegExp(options.glob) : null;
    const max = options.maxMatches ?? 200;
    const matches: GrepMatch[] = [];
    const candidates = (await this.list(base, DEEP_LIST))
      .filter((e) => e.type === "file" && e.size <= GREP_MAX_FILE_BYTES)
      .filter((e) => fileFilter === null || fileFilter.test(posix.basename(e.path)) || fileFilter.test(posix.relative(base, e.path)))
      .slice(0, GREP_MAX_FILES);
    for (const entry of candidates) {
      const bytes = await this.remote.readFile(entry.path).catch(() => null);
      if (bytes === null || bytes.includes(0)) continue;
      const lines = new TextDecoder().decode(bytes).split("\n");
      for (const [i, line] of lines.entries()) {
        if (!regex.test(line)) continue;
        matches.push({ path: entry.path, line: i + 1, text: line });
        if (matches.length >= max) return matches;
      }
    }
    return matches;
  }

  private async list(remotePath: string, depth: number): Promise<RemoteEntry[]> {
    try {
      return await this.remote.list(remotePath, depth);
    } catch (err) {
      throw this.failure("cannot list folder", remotePath, err);
    }
  }

  private async write(remotePath: string, bytes: Uint8Array): Promise<void> {
    try {
      await this.remote.writeFile(remotePath, bytes);
    } catch (err) {
      throw this.failure("cannot write file", remotePath, err);
    }
  }

  /** Virtual path → remote path (the same string, normalized), refusing anything outside `/mnt/user-data`. */
  private remotePath(virtualPath: string, mode: "read" | "write"): string {
    if (typeof virtualPath !== "string" || virtualPath.includes("\0")) {
      throw new AntlerError(ErrorCodes.PATH_UNSAFE, "path contains a NUL byte", { where: this.id });
    }
    const normalized = posix.resolve(VIRTUAL_DIRS.workspace, virtualPath);
    if (mode === "write" && READ_ONLY_ROOTS.some((root) => normalized === root || normalized.startsWith(`${root}/`))) {
      throw new AntlerError(ErrorCodes.SANDBOX_PATH_READ_ONLY, `${normalized} is read-only`, { where: this.id });
    }
    if (normalized === VIRTUAL_ROOT || normalized.startsWith(`${VIRTUAL_ROOT}/`)) return normalized;
    // Skills are uploaded to /mnt/skills when the skills plugin is loaded; reads only (writes were refused above).
    const skills = SANDBOX_VIRTUAL_ROOTS.skills;
    if (normalized === skills || normalized.startsWith(`${skills}/`)) return normalized;
    throw new AntlerError(ErrorCodes.PATH_UNSAFE, `path ${JSON.stringify(virtualPath)} is outside ${VIRTUAL_ROOT}`, {
      where: this.id,
      hint: `The sandbox serves ${Object.values(VIRTUAL_DIRS).join(", ")}, and /mnt/skills (read-only) when the skills plugin is loaded.`,
    });
  }

  private failure(what: string, path: string, err: unknown): AntlerError {
    if (isAntlerError(err)) return err;
    return new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, `${what}: ${path}: ${(err as Error)?.message ?? String(err)}`, {
      where: this.id,
      cause: err,
    });
  }
}

function toFileEntry(entry: RemoteEntry): FileEntry {
  return {
    path: entry.path,
    type: entry.type === "dir" ? "directory" : entry.type,
    size: entry.size,
    mtimeMs: entry.mtimeMs ?? 0,
  };
}

/** `**` spans folders, `*` and `?` stay within one, `{a,b}` alternates, `[...]` is a class. */
export function globToRegExp(pattern: string): RegExp {
  let out = "";
  let braces = 0;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === "*") {
      if (pattern[i + 1] === "*") {
        const slash = pattern[i + 2] === "/";
        out += slash ? "(?:.*/)?" : ".*";
        i += slash ? 2 : 1;
      } else out += "[^/]*";
    } else if (ch === "?") out += "[^/]";
    else if (ch === "{") {
      braces++;
      out += "(?:";
    } else if (ch === "}" && braces > 0) {
      braces--;
      out += ")";
    } else if (ch === "," && braces > 0) out += "|";
    else if (ch === "[") {
      const close = pattern.indexOf("]", i + 1);
      if (close === -1) out += "\\[";
      else {
        const body = pattern
          .slice(i + 1, close)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\");
        out += `[${body}]`;
        i = close;
      }
    } else out += ch.replace(/[.+^$()|\\\]]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}
