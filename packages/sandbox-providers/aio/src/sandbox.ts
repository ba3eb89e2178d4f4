import { randomUUID } from "node:crypto";
import { constants } from "node:os";
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
  type ReadOptions,
  SANDBOX_VIRTUAL_ROOTS,
  type Sandbox,
  type WriteOptions,
} from "@antler/kernel";
import type { BashExecResult, CommandStatus, FileWriteRequest } from "./api.js";
import type { AioClient } from "./client.js";
import type { SidecarEgressControl } from "./egress.js";
import type { AioPathMap } from "./paths.js";

export interface AioSandboxOptions {
  /** Antler's id for this sandbox, e.g. `aio:<sandbox id>`. */
  id: string;
  client: AioClient;
  paths: AioPathMap;
  /** The container user's home (`GET /v1/sandbox` home_dir): where housekeeping commands run. */
  homeDir: string;
  /** Set when the container's files live apart from the host folders: a new container is a new generation. */
  generation?: string;
  /** Restricted sandboxes: denials and approvals through the sidecar. */
  egress?: SidecarEgressControl;
  /** Seconds one exec HTTP call waits before the sandbox falls back to long-polling `/v1/bash/output`. Default 60. */
  execWaitSeconds?: number;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const DEFAULT_LIST_DEPTH = 2;
const DEFAULT_GLOB_RESULTS = 1000;
const DEFAULT_GREP_MATCHES = 200;
/** How long an aborted exec may take to come back after the kill before its HTTP call is dropped. */
const ABORT_GRACE_MS = 5_000;
const POLL_WAIT_SECONDS = 10;

const SIGNAL_NAMES = new Map<number, string>(Object.entries(constants.signals).map(([name, num]) => [num, name]));

/** One AIO container seen through the `Sandbox` contract: virtual paths in, virtual paths out. */
export class AioSandbox implements Sandbox {
  readonly id: string;
  readonly generation?: string;
  /** Present on restricted sandboxes: the sidecar's denials and the policy approvals. */
  readonly egress?: SidecarEgressControl;
  readonly client: AioClient;
  readonly paths: AioPathMap;
  readonly homeDir: string;
  private readonly execWaitSeconds: number;

  constructor(options: AioSandboxOptions) {
    this.id = options.id;
    this.client = options.client;
    this.paths = options.paths;
    this.homeDir = options.homeDir;
    this.execWaitSeconds = options.execWaitSeconds ?? 60;
    if (options.generation !== undefined) this.generation = options.generation;
    if (options.egress !== undefined) this.egress = options.egress;
  }

  async executeCommand(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const started = performance.now();
    for (const key of Object.keys(options.env ?? {})) {
      if (!ENV_NAME.test(key)) {
        throw new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, `environment variable name ${JSON.stringify(key)} is not a POSIX name`, {
          where: this.id,
          hint: "Use letters, digits and '_', not starting with a digit.",
        });
      }
    }
    const execDir = this.paths.toContainer(options.cwd ?? SANDBOX_VIRTUAL_ROOTS.workspace);
    const signal = options.signal;
    if (signal?.aborted) throw cancelled(this.id);

    return this.translateErrors(async () => {
      const sessionId = `antler-${randomUUID()}`;
      await this.client.createBashSession({ session_id: sessionId, exec_dir: execDir });
      // The HTTP calls outlive an abort by a grace period: the kill below makes the command come back as
      // `killed`, which is reported as a result, like a local process ended by a signal.
      const calls = new AbortController();
      let aborted = false;
      let graceTimer: NodeJS.Timeout | undefined;
      const onAbort = (): void => {
        aborted = true;
        this.client.bashKill({ session_id: sessionId, signal: "SIGKILL" }).catch(() => undefined);
        graceTimer = setTimeout(() => calls.abort(), ABORT_GRACE_MS);
        graceTimer.unref();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        const hardTimeout = options.timeout !== undefined ? Math.max(options.timeout, 1) / 1000 : undefined;
        const wait = hardTimeout !== undefined ? hardTimeout + 5 : this.execWaitSeconds;
        let result = await this.client.bashExec(
          {
            session_id: sessionId,
            command: this.paths.commandToContainer(command),
            exec_dir: execDir,
            ...(options.env && Object.keys(options.env).length > 0 ? { env: { ...options.env } } : {}),
            timeout: wait,
            ...(hardTimeout !== undefined ? { hard_timeout: hardTimeout } : {}),
            max_output_length: 0,
          },
          { signal: calls.signal, timeoutMs: (wait + 15) * 1000 },
        );
        let stdout = result.stdout ?? "";
        let stderr = result.stderr ?? "";
        let status: CommandStatus = result.status;
        let exitCode = result.exit_code ?? null;
        let offset = result.offset;
        let stderrOffset = result.stderr_offset;
        while (status === "running" || status === "pending") {
          const chunk = await this.client.bashOutput(
            {
              session_id: sessionId,
              command_id: result.command_id,
              offset,
              stderr_offset: stderrOffset,
              wait: true,
              wait_timeout: POLL_WAIT_SECONDS,
            },
            { signal: calls.signal, timeoutMs: (POLL_WAIT_SECONDS + 15) * 1000 },
          );
          stdout += chunk.stdout;
          stderr += chunk.stderr;
          offset = chunk.offset;
          stderrOffset = chunk.stderr_offset;
          if (chunk.command && chunk.command.command_id === result.command_id) {
            status = chunk.command.status;
            exitCode = chunk.command.exit_code ?? null;
          }
        }
        result = { ...result, status, exit_code: exitCode };
        return this.toExecResult(result, stdout, stderr, aborted, performance.now() - started);
      } catch (error) {
        if (aborted) throw cancelled(this.id, error);
        throw error;
      } finally {
        signal?.removeEventListener("abort", onAbort);
        if (graceTimer) clearTimeout(graceTimer);
        await this.client.closeBashSession(sessionId).catch(() => undefined);
      }
    });
  }

  async readFile(path: string, options: ReadOptions = {}): Promise<string> {
    const file = this.paths.toContainer(path);
    return this.translateErrors(async () => {
      const res = await this.client.readFile({
        file,
        ...(options.startLine !== undefined ? { start_line: Math.max(options.startLine - 1, 0) } : {}),
        ...(options.endLine !== undefined ? { end_line: Math.max(options.endLine, 0) } : {}),
      });
      return res.content;
    });
  }

  async downloadFile(path: string): Promise<Uint8Array> {
    const file = this.paths.toContainer(path);
    return this.translateErrors(() => this.client.downloadFile(file));
  }

  async listDir(path: string, maxDepth = DEFAULT_LIST_DEPTH): Promise<FileEntry[]> {
    const dir = this.paths.toContainer(path);
    const depth = Math.max(1, Math.floor(maxDepth));
    return this.translateErrors(async () => {
      const res = await this.client.listPath({ path: dir, recursive: depth > 1, max_depth: depth, show_hidden: true, include_size: true });
      const entries: FileEntry[] = [];
      for (const info of res.files) {
        const full = info.path.startsWith("/") ? info.path : `${dir}/${info.path}`;
        if (full === dir || !full.startsWith(`${dir}/`)) continue;
        // The server's notion of max_depth varies between versions; the contract's is enforced here.
        if (full.slice(dir.length + 1).split("/").length > depth) continue;
        const virtual = this.paths.toVirtual(full);
        if (virtual === null) continue;
        const mtime = info.modified_time ? Date.parse(info.modified_time) : Number.NaN;
        entries.push({
          path: virtual,
          type: info.is_directory ? "directory" : "file",
          size: info.size ?? 0,
          mtimeMs: Number.isFinite(mtime) ? mtime : 0,
        });
      }
      return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    });
  }

  async writeFile(path: string, content: string, options: WriteOptions = {}): Promise<void> {
    const file = this.paths.toContainer(path, { write: true });
    return this.translateErrors(() => this.writeCreatingParents({ file, content, encoding: "utf-8", append: options.append === true }));
  }

  async updateFile(path: string, bytes: Uint8Array): Promise<void> {
    const file = this.paths.toContainer(path, { write: true });
    return this.translateErrors(() =>
      this.writeCreatingParents({ file, content: Buffer.from(bytes).toString("base64"), encoding: "base64" }),
    );
  }

  /**
   * Creates the user-data folders (workspace, uploads, outputs) in the container. The provider calls it once
   * per new sandbox: a fresh AIO image has only the home folder.
   */
  async prepareFolders(signal?: AbortSignal): Promise<void> {
    const dirs = [SANDBOX_VIRTUAL_ROOTS.workspace, SANDBOX_VIRTUAL_ROOTS.uploads, SANDBOX_VIRTUAL_ROOTS.outputs].map((d) =>
      this.paths.toContainer(d),
    );
    await this.housekeeping(`mkdir -p -- ${dirs.map(shellQuote).join(" ")}`, signal);
  }

  /**
   * Writes a file; when the server does not create missing parent folders itself (the API leaves that
   * unspecified), creates them and writes once more.
   */
  private async writeCreatingParents(body: FileWriteRequest): Promise<void> {
    try {
      await this.client.writeFile(body);
    } catch (error) {
      if (!isAntlerError(error, ErrorCodes.SANDBOX_EXEC_FAILED) || !isMissingPath(error.details)) throw error;
      const parent = body.file.slice(0, body.file.lastIndexOf("/")) || "/";
      await this.housekeeping(`mkdir -p -- ${shellQuote(parent)}`);
      await this.client.writeFile(body);
    }
  }

  /** Runs a command of the provider's own (container paths, in the home folder); throws unless it exits 0. */
  private async housekeeping(command: string, signal?: AbortSignal): Promise<void> {
    const sessionId = `antler-${randomUUID()}`;
    const call = { ...(signal ? { signal } : {}) };
    await this.client.createBashSession({ session_id: sessionId, exec_dir: this.homeDir }, call);
    try {
      const res = await this.client.bashExec(
        { session_id: sessionId, command, exec_dir: this.homeDir, timeout: 30, hard_timeout: 30 },
        call,
      );
      if (res.status !== "completed" || res.exit_code !== 0) {
        throw new AntlerError(
          ErrorCodes.SANDBOX_EXEC_FAILED,
          `preparing the AIO sandbox failed: ${(res.stderr ?? "").trim() || res.status}`,
          {
            where: this.id,
            hint: "The container user may lack write access to its home folder; set container_root to a writable folder.",
            details: { exitCode: res.exit_code ?? null, status: res.status },
          },
        );
      }
    } finally {
      await this.client.closeBashSession(sessionId).catch(() => undefined);
    }
  }

  async glob(pattern: string, options: GlobOptions = {}): Promise<string[]> {
    const base = this.paths.toContainer(options.path ?? SANDBOX_VIRTUAL_ROOTS.workspace);
    assertRelativePattern(pattern);
    const max = options.maxResults ?? DEFAULT_GLOB_RESULTS;
    return this.translateErrors(async () => {
      const res = await this.client.globFiles({
        path: base,
        pattern,
        files_only: true,
        include_metadata: false,
        max_results: Math.min(Math.max(max, 1), 50_000),
      });
      const out: string[] = [];
      for (const file of res.files) {
        const virtual = this.paths.toVirtual(file.path.startsWith("/") ? file.path : `${base}/${file.path}`);
        if (virtual !== null) out.push(virtual);
        if (out.length >= max) break;
      }
      return out;
    });
  }

  async grep(pattern: string, options: GrepOptions = {}): Promise<GrepMatch[]> {
    const base = this.paths.toContainer(options.path ?? SANDBOX_VIRTUAL_ROOTS.workspace);
    const max = options.maxMatches ?? DEFAULT_GREP_MATCHES;
    return this.translateErrors(async () => {
      const res = await this.client.grepFiles({
        path: base,
        pattern,
        ...(options.glob ? { include: [options.glob] } : {}),
        case_insensitive: options.ignoreCase === true,
        max_results: Math.min(Math.max(max, 1), 10_000),
        recursive: true,
      });
      const out: GrepMatch[] = [];
      for (const m of res.matches) {
        const virtual = this.paths.toVirtual(m.file.startsWith("/") ? m.file : `${base}/${m.file}`);
        if (virtual === null) continue;
        out.push({ path: virtual, line: m.line_number, text: m.line_content.replace(/\r?\n$/, "") });
        if (out.length >= max) break;
      }
      return out;
    });
  }

  private toExecResult(result: BashExecResult, stdout: string, stderr: string, aborted: boolean, durationMs: number): ExecResult {
    const base = { stdout: this.paths.textToVirtual(stdout), stderr: this.paths.textToVirtual(stderr), durationMs: Math.round(durationMs) };
    const code = result.exit_code ?? null;
    if (result.status === "timed_out") return { ...base, exitCode: null, timedOut: true, signal: "SIGKILL" };
    // A negative code is how the sandbox's Python runtime reports "ended by signal N".
    const bySignal = code !== null && code < 0 ? (SIGNAL_NAMES.get(-code) ?? `SIG${-code}`) : null;
    if (result.status === "killed" || aborted) return { ...base, exitCode: null, timedOut: false, signal: bySignal ?? "SIGKILL" };
    if (bySignal) return { ...base, exitCode: null, timedOut: false, signal: bySignal };
    return { ...base, exitCode: code, timedOut: false, signal: null };
  }

  /** Re-raises AntlerErrors with container paths turned back into virtual ones, so the agent never sees them. */
  private async translateErrors<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (!isAntlerError(error) || this.paths.identity) throw error;
      const raw = stripComposed(error.message, error.where, error.hint);
      const details = { ...error.details };
      if (typeof details.path === "string") details.path = this.paths.toVirtual(details.path) ?? "(outside the sandbox folders)";
      throw new AntlerError(error.code, this.paths.textToVirtual(raw), {
        where: error.where ?? this.id,
        ...(error.hint ? { hint: error.hint } : {}),
        details,
        cause: error,
      });
    }
  }
}

function cancelled(id: string, cause?: unknown): AntlerError {
  return new AntlerError(ErrorCodes.RUN_CANCELLED, "the command was cancelled before the AIO sandbox answered", {
    where: id,
    ...(cause === undefined ? {} : { cause }),
  });
}

function isMissingPath(details: Record<string, unknown>): boolean {
  const errorType = typeof details.errorType === "string" ? details.errorType : "";
  return details.errno === "ENOENT" || /not.?found|no.?such/i.test(errorType);
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function assertRelativePattern(pattern: string): void {
  if (pattern.startsWith("/") || pattern.split("/").includes("..")) {
    throw new AntlerError(ErrorCodes.PATH_UNSAFE, `glob pattern ${JSON.stringify(pattern)} must be relative and free of '..'`, {
      hint: "Pass the folder as `path` and a relative pattern such as **/*.ts.",
    });
  }
}

/** The message an AntlerError was built with, without the `where: ` prefix and hint suffix it composed. */
function stripComposed(message: string, where: string | undefined, hint: string | undefined): string {
  let out = message;
  if (hint && out.endsWith(`\n  hint: ${hint}`)) out = out.slice(0, -`\n  hint: ${hint}`.length);
  if (where && out.startsWith(`${where}: `)) out = out.slice(where.length + 2);
  return out;
}
