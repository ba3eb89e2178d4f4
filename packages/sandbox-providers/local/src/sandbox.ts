import { constants } from "node:fs";
import { lstat, mkdir, open, readdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  AntlerError,
  ErrorCodes,
  type ExecOptions,
  type ExecResult,
  type FileEntry,
  type GlobOptions,
  type GrepMatch,
  type GrepOptions,
  type ReadOptions,
  SANDBOX_VIRTUAL_ROOTS,
  type Sandbox,
  type WriteOptions,
} from "@antler/kernel";
import { ENV_NAME, scrubEnvironment } from "./env-policy.js";
import type { PathAccess, ResolvedPath, SandboxPathMap } from "./path-mapping.js";
import { runInProcessGroup } from "./process-group.js";
import { globFiles, grepFiles } from "./search.js";

export interface LocalSandboxOptions {
  id: string;
  paths: SandboxPathMap;
  shell: string;
  /** Used when a command passes no `timeout`. */
  defaultTimeoutMs: number;
  maxOutputChars: number;
  /** Inherited environment before scrubbing. */
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** Process groups of commands still running; shared with the provider, which kills them on reset and close. */
  running: Set<number>;
}

const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
const APPEND_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NOFOLLOW;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW;

function errnoOf(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : undefined;
}

/**
 * One thread's sandbox on the host. It holds no state of its own besides the path map, so an instance evicted
 * from the provider's LRU keeps working for whoever still holds it. NOT an isolation boundary: see README.
 */
export class LocalSandbox implements Sandbox {
  readonly id: string;
  private readonly paths: SandboxPathMap;
  private readonly options: LocalSandboxOptions;

  constructor(options: LocalSandboxOptions) {
    this.id = options.id;
    this.paths = options.paths;
    this.options = options;
  }

  async executeCommand(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    if (options.signal?.aborted) {
      throw new AntlerError(ErrorCodes.RUN_CANCELLED, "the command was cancelled before it started", { where: `sandbox ${this.id}` });
    }
    let cwd: string;
    if (options.cwd === undefined) {
      // A command may have removed the workspace; without it the spawn would fail and look like a missing shell.
      cwd = this.paths.dirs.workspace;
      await mkdir(cwd, { recursive: true });
    } else {
      cwd = await this.directory(options.cwd, "read");
    }
    const env = scrubEnvironment(this.options.baseEnv);
    for (const [name, value] of Object.entries(options.env ?? {})) {
      if (!ENV_NAME.test(name)) {
        throw new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, `environment variable name ${JSON.stringify(name)} is not a POSIX name`, {
          where: `sandbox ${this.id}`,
          hint: "Use letters, digits and '_', not starting with a digit.",
        });
      }
      env[name] = String(value);
    }
    // bash reports $PWD as the working directory when it matches; otherwise the real path, which the map also knows.
    env.PWD = cwd;
    const started = performance.now();
    const run = await runInProcessGroup({
      shell: this.options.shell,
      command: this.paths.commandToHost(command),
      cwd,
      env,
      timeoutMs: options.timeout ?? this.options.defaultTimeoutMs,
      signal: options.signal,
      maxOutputChars: this.options.maxOutputChars,
      running: this.options.running,
    });
    if (run.spawnError) {
      throw new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, `the shell ${JSON.stringify(this.options.shell)} could not be started`, {
        where: `sandbox ${this.id}`,
        hint: "Set `shell` in the @antler/sandbox-local plugin config to an executable shell (default /bin/bash).",
        details: { errno: run.spawnError.code, reason: run.spawnError.message },
      });
    }
    let stderr = this.paths.outputToVirtual(run.stderr);
    if (run.outputTruncated) stderr += `\n[output exceeded ${this.options.maxOutputChars} characters; the command was killed]`;
    return {
      exitCode: run.exitCode,
      stdout: this.paths.outputToVirtual(run.stdout),
      stderr,
      timedOut: run.timedOut,
      signal: run.signal,
      durationMs: Math.round(performance.now() - started),
    };
  }

  async readFile(path: string, options: ReadOptions = {}): Promise<string> {
    const resolved = await this.paths.resolve(path, "read");
    const text = (await this.readBytes(resolved, path)).toString("utf8");
    const { startLine, endLine } = options;
    if (startLine === undefined && endLine === undefined) return text;
    for (const [name, value] of [
      ["startLine", startLine],
      ["endLine", endLine],
    ] as const) {
      if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
        throw new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, `${name} must be a positive integer, got ${value}`, {
          where: `sandbox ${this.id}: readFile ${path}`,
          hint: "Lines are 1-based and inclusive.",
        });
      }
    }
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    return lines.slice((startLine ?? 1) - 1, endLine ?? lines.length).join("\n");
  }

  async downloadFile(path: string): Promise<Uint8Array> {
    const bytes = await this.readBytes(await this.paths.resolve(path, "read"), path);
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  async writeFile(path: string, content: string, options: WriteOptions = {}): Promise<void> {
    await this.writeBytes(path, Buffer.from(content, "utf8"), options.append === true);
  }

  async updateFile(path: string, bytes: Uint8Array): Promise<void> {
    await this.writeBytes(path, bytes, false);
  }

  async listDir(path: string, maxDepth = 2): Promise<FileEntry[]> {
    const virtualDir = this.paths.normalize(path);
    const hostDir = await this.directory(path, "read");
    const entries: FileEntry[] = [];
    const walk = async (host: string, virtual: string, depth: number): Promise<void> => {
      let names: string[];
      try {
        names = (await readdir(host)).sort();
      } catch (err) {
        if (depth === 1) throw this.fileError(err, path, "list");
        return; // an unreadable subfolder is left out, not fatal
      }
      for (const name of names) {
        const childHost = join(host, name);
        const childVirtual = virtual === "/" ? `/${name}` : `${virtual}/${name}`;
        let info: Awaited<ReturnType<typeof lstat>>;
        try {
          info = await lstat(childHost);
        } catch {
          continue; // removed while listing
        }
        const type = info.isSymbolicLink() ? "symlink" : info.isDirectory() ? "directory" : "file";
        entries.push({ path: childVirtual, type, size: Number(info.size), mtimeMs: Number(info.mtimeMs) });
        // Symlinked folders are listed, never entered: their contents may live outside the root.
        if (type === "directory" && depth < maxDepth) await walk(childHost, childVirtual, depth + 1);
      }
    };
    await walk(hostDir, virtualDir, 1);
    return entries;
  }

  async glob(pattern: string, options: GlobOptions = {}): Promise<string[]> {
    const virtualDir = this.paths.normalize(options.path ?? SANDBOX_VIRTUAL_ROOTS.workspace);
    const hostDir = await this.directory(virtualDir, "read");
    return globFiles({ pattern, hostDir, virtualDir, maxResults: options.maxResults ?? 1000, where: `sandbox ${this.id}` });
  }

  async grep(pattern: string, options: GrepOptions = {}): Promise<GrepMatch[]> {
    const target = options.path ?? SANDBOX_VIRTUAL_ROOTS.workspace;
    const resolved = await this.paths.resolve(target, "read");
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(resolved.host)).isDirectory();
    } catch (err) {
      throw this.fileError(err, target, "search");
    }
    return grepFiles({
      pattern,
      hostPath: resolved.host,
      virtualPath: resolved.virtual,
      isDirectory,
      glob: options.glob,
      ignoreCase: options.ignoreCase === true,
      maxMatches: options.maxMatches ?? 200,
      where: `sandbox ${this.id}`,
    });
  }

  /** A virtual folder's host path; rejects when it is missing or not a folder. */
  private async directory(path: string, access: PathAccess): Promise<string> {
    const resolved = await this.paths.resolve(path, access);
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(resolved.host)).isDirectory();
    } catch (err) {
      throw this.fileError(err, path, "open");
    }
    if (!isDirectory) {
      throw new AntlerError(ErrorCodes.SANDBOX_NOT_FOUND, `${JSON.stringify(path)} is not a folder`, {
        where: `sandbox ${this.id}`,
        hint: "Pass a folder path.",
      });
    }
    return resolved.host;
  }

  private async readBytes(resolved: ResolvedPath, path: string): Promise<Buffer> {
    try {
      // O_NOFOLLOW: the path was confined a moment ago; a symlink swapped in since then is refused, not followed.
      const handle = await open(resolved.host, READ_FLAGS);
      try {
        return await handle.readFile();
      } finally {
        await handle.close();
      }
    } catch (err) {
      throw this.fileError(err, path, "read");
    }
  }

  private async writeBytes(path: string, bytes: Uint8Array, append: boolean): Promise<void> {
    const resolved = await this.paths.resolve(path, "write");
    try {
      await mkdir(dirname(resolved.host), { recursive: true });
      // Folders created just now could have been raced by a command; confine again before opening.
      const confirmed = await this.paths.resolve(path, "write");
      const handle = await open(confirmed.host, append ? APPEND_FLAGS : WRITE_FLAGS, 0o644);
      try {
        await handle.writeFile(bytes);
      } finally {
        await handle.close();
      }
    } catch (err) {
      if (err instanceof AntlerError) throw err;
      throw this.fileError(err, path, "write");
    }
  }

  /** Node's fs errors name host paths; the agent gets the virtual path and a coded error instead. */
  private fileError(err: unknown, path: string, action: string): AntlerError {
    if (err instanceof AntlerError) return err;
    const code = errnoOf(err);
    const where = `sandbox ${this.id}`;
    switch (code) {
      case "ENOENT":
      case "ENOTDIR":
        return new AntlerError(ErrorCodes.SANDBOX_NOT_FOUND, `cannot ${action} ${JSON.stringify(path)}: no such file or folder`, {
          where,
          hint: "Check the path with ls or glob; paths are virtual, e.g. /mnt/user-data/workspace/notes.txt.",
          details: { path, errno: code },
        });
      case "EISDIR":
        return new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, `cannot ${action} ${JSON.stringify(path)}: it is a folder`, {
          where,
          hint: "Use ls to list a folder.",
          details: { path, errno: code },
        });
      case "ELOOP":
        return new AntlerError(ErrorCodes.PATH_UNSAFE, `cannot ${action} ${JSON.stringify(path)}: it is a symlink`, {
          where,
          hint: "Operate on the file the link points to.",
          details: { path, errno: code },
        });
      default:
        return new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, `cannot ${action} ${JSON.stringify(path)} (${code ?? "error"})`, {
          where,
          details: { path, errno: code },
        });
    }
  }
}
