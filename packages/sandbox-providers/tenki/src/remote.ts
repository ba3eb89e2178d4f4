import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import { AntlerError, ErrorCodes, isAntlerError } from "@antler/kernel";
import type { E2BRemote, RemoteEntry, RemoteInfo, RemoteRunOptions, RemoteRunResult, RemoteSandbox } from "@antler/sandbox-e2b";
import type { TenkiApi } from "./api.js";

/** A session as `GetSession` / `ListSessions` return it (the fields this package reads). */
export interface TenkiSession {
  id: string;
  state?: string;
  createdAt?: string;
  timeoutAt?: string;
  metadata?: Record<string, string>;
  tags?: string[];
  terminalError?: string;
}

interface CommandExecution {
  status?: string;
  exitCode?: number;
}

interface ListEntry {
  name: string;
  isDir?: boolean;
  size?: string | number;
  mode?: number;
  modifiedUnixNs?: string | number;
}

export interface TenkiCreateSettings {
  projectId?: string | undefined;
  workspaceId?: string | undefined;
  cpuCores?: number | undefined;
  memoryMb?: number | undefined;
  readyTimeoutMs: number;
  scratchDir: string;
  /** Polling interval while a session starts. Default 1000 ms. */
  pollMs?: number;
}

/** Every session this package creates carries this tag, so listing can be narrowed to Antler's sessions. */
export const TENKI_SESSION_TAG = "antler";
const RUNNING = "SESSION_STATE_RUNNING";
const GONE = new Set(["SESSION_STATE_TERMINATING", "SESSION_STATE_TERMINATED", "SESSION_STATE_USER_SHUTDOWN"]);
const COMMAND_MARGIN_MS = 30_000;
/** Go's `os.ModeSymlink`, which Tenki's file API reports in `mode`, or the POSIX `S_IFLNK` type bits. */
const GO_MODE_SYMLINK = 0x8000000;

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** protobuf JSON duration: seconds with up to 9 decimals and an `s`. */
function duration(ms: number): string {
  return `${(ms / 1000).toFixed(3).replace(/\.?0+$/, "")}s`;
}

function isSymlink(mode: number | undefined): boolean {
  if (mode === undefined) return false;
  return (mode & GO_MODE_SYMLINK) !== 0 || (mode & 0o170000) === 0o120000;
}

/** `RemoteSandbox` over one Tenki session. */
class TenkiSandbox implements RemoteSandbox {
  constructor(
    private readonly api: TenkiApi,
    readonly sandboxId: string,
    private readonly settings: TenkiCreateSettings,
  ) {}

  /**
   * Runs through `ExecuteCommand`, which waits for the command and answers its status and exit code but not its
   * output (that is stored as artifacts). So the command's output is redirected into two scratch files, read back
   * over the data plane and removed.
   */
  async run(command: string, options: RemoteRunOptions = {}): Promise<RemoteRunResult> {
    const stem = posix.join(this.settings.scratchDir, `antler-exec-${randomBytes(6).toString("hex")}`);
    const out = `${stem}.out`;
    const err = `${stem}.err`;
    const body = `${options.cwd !== undefined ? `cd ${shellQuote(options.cwd)} && ` : ""}{ ${command}\n}`;
    let script = `{ ${body}\n} > ${shellQuote(out)} 2> ${shellQuote(err)}`;
    // `user: root` (the bootstrap that makes /mnt/user-data): a session whose default user is not root gets there
    // through passwordless sudo when it has it.
    if (options.user === "root") {
      script = `if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then exec sudo -n /bin/sh -c ${shellQuote(script)}; fi; ${script}`;
    }
    const answer = await this.api.control<{ execution?: CommandExecution }>(
      "ExecuteCommand",
      {
        sessionId: this.sandboxId,
        command: "/bin/sh",
        args: ["-c", script],
        ...(options.env !== undefined && Object.keys(options.env).length ? { env: { ...options.env } } : {}),
        ...(options.timeoutMs !== undefined ? { timeout: duration(options.timeoutMs) } : {}),
      },
      { timeoutMs: (options.timeoutMs ?? 600_000) + COMMAND_MARGIN_MS, signal: options.signal },
    );
    const execution = answer.execution ?? {};
    const timedOut = execution.status === "COMMAND_STATUS_TIMED_OUT";
    if (!timedOut && execution.status !== "COMMAND_STATUS_SUCCEEDED" && execution.status !== "COMMAND_STATUS_FAILED") {
      throw new AntlerError(
        ErrorCodes.SANDBOX_EXEC_FAILED,
        `Tenki answered ExecuteCommand with status ${execution.status ?? "(none)"}, not a finished command`,
        {
          where: "tenki",
        },
      );
    }
    const [stdout, stderr] = await Promise.all([this.readText(out), this.readText(err)]);
    await Promise.all([out, err].map((path) => this.api.data(this.sandboxId, "Remove", { path, recursive: false }).catch(() => undefined)));
    return { exitCode: timedOut ? null : (execution.exitCode ?? 0), stdout, stderr, timedOut };
  }

  private async readText(path: string): Promise<string> {
    try {
      return Buffer.from(await this.readFile(path)).toString("utf8");
    } catch (err) {
      // A command killed before its shell opened the capture files leaves none: no output, not a failure.
      if (isAntlerError(err, ErrorCodes.SANDBOX_NOT_FOUND)) return "";
      throw err;
    }
  }

  async readFile(path: string, options: { signal?: AbortSignal | undefined } = {}): Promise<Uint8Array> {
    const answer = await this.api.data<{ content?: string }>(this.sandboxId, "ReadFile", { path }, { signal: options.signal });
    return new Uint8Array(Buffer.from(answer.content ?? "", "base64"));
  }

  async writeFile(path: string, bytes: Uint8Array): Promise<void> {
    await this.api.data(this.sandboxId, "Mkdir", { path: posix.dirname(path), mode: 0o755, recursive: true });
    await this.api.data(this.sandboxId, "WriteFile", { path, content: Buffer.from(bytes).toString("base64") });
  }

  async list(path: string, depth: number): Promise<RemoteEntry[]> {
    const out: RemoteEntry[] = [];
    const walk = async (folder: string, level: number): Promise<void> => {
      const answer = await this.api.data<{ entries?: ListEntry[] }>(this.sandboxId, "List", { path: folder, includeHidden: true });
      for (const entry of answer.entries ?? []) {
        const full = posix.join(folder, entry.name);
        const type = isSymlink(entry.mode) ? "symlink" : entry.isDir ? "dir" : "file";
        const ns = Number(entry.modifiedUnixNs ?? Number.NaN);
        out.push({ path: full, type, size: Number(entry.size ?? 0), mtimeMs: Number.isFinite(ns) ? Math.floor(ns / 1e6) : null });
        if (type === "dir" && level < depth) await walk(full, level + 1);
      }
    };
    await walk(path, 1);
    return out;
  }

  async remove(path: string): Promise<void> {
    await this.api.data(this.sandboxId, "Remove", { path, recursive: true });
  }

  async getInfo(): Promise<RemoteInfo> {
    const { session } = await this.api.control<{ session?: TenkiSession }>("GetSession", { sessionId: this.sandboxId });
    return {
      sandboxId: this.sandboxId,
      templateId: "tenki",
      state: session?.state === "SESSION_STATE_PAUSED" ? "paused" : "running",
      startedAt: new Date(session?.createdAt ?? Date.now()),
      endAt: new Date(session?.timeoutAt ?? 8.64e15),
    };
  }

  async kill(): Promise<boolean> {
    return terminate(this.api, this.sandboxId);
  }
}

async function terminate(api: TenkiApi, sessionId: string): Promise<boolean> {
  api.forget(sessionId);
  try {
    await api.control("TerminateSession", { sessionId });
    return true;
  } catch (err) {
    if (isAntlerError(err, ErrorCodes.SANDBOX_NOT_FOUND)) return false;
    throw err;
  }
}

/** The `E2BRemote` seam of `@antler/sandbox-e2b` over Tenki's ConnectRPC API. */
export function createTenkiRemote(api: TenkiApi, settings: TenkiCreateSettings): E2BRemote {
  /** Waits until the session is RUNNING (resuming a paused one); throws when it ends or the wait runs out. */
  const ready = async (session: TenkiSession, signal?: AbortSignal): Promise<RemoteSandbox> => {
    const deadline = Date.now() + settings.readyTimeoutMs;
    let current = session;
    if (current.state === "SESSION_STATE_PAUSED") await api.control("ResumeSession", { sessionId: current.id }, { signal });
    while (current.state !== RUNNING) {
      if (current.state && GONE.has(current.state)) {
        throw new AntlerError(
          ErrorCodes.SANDBOX_NOT_FOUND,
          `Tenki session ${current.id} is ${current.state}${current.terminalError ? `: ${current.terminalError}` : ""}`,
          {
            where: "tenki",
          },
        );
      }
      if (Date.now() > deadline) {
        throw new AntlerError(
          ErrorCodes.SANDBOX_UNAVAILABLE,
          `Tenki session ${current.id} was not running after ${settings.readyTimeoutMs} ms (state ${current.state})`,
          {
            where: "tenki",
            hint: "Raise ready_timeout_ms, or check the session in the Tenki console.",
          },
        );
      }
      await new Promise((r) => setTimeout(r, settings.pollMs ?? 1000));
      signal?.throwIfAborted();
      current = (await api.control<{ session?: TenkiSession }>("GetSession", { sessionId: current.id }, { signal })).session ?? current;
    }
    return new TenkiSandbox(api, current.id, settings);
  };

  return {
    async create(create) {
      const answer = await api.control<{ session?: TenkiSession }>(
        "CreateSession",
        {
          // What Tenki's own SDKs send: the owner is the key's identity, resolved by the service.
          ownerType: "SERVICE",
          ownerId: "self",
          name: `antler-${randomBytes(4).toString("hex")}`,
          metadata: { ...(create.metadata ?? {}) },
          tags: [TENKI_SESSION_TAG],
          maxDuration: duration(create.timeoutMs),
          waitReady: true,
          ...(settings.projectId !== undefined ? { projectId: settings.projectId } : {}),
          ...(settings.workspaceId !== undefined ? { workspaceId: settings.workspaceId } : {}),
          ...(settings.cpuCores !== undefined ? { cpuCores: settings.cpuCores } : {}),
          ...(settings.memoryMb !== undefined ? { memoryMb: settings.memoryMb } : {}),
        },
        { timeoutMs: settings.readyTimeoutMs, signal: create.signal },
      );
      if (!answer.session?.id) {
        throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, "Tenki CreateSession answered without a session id", { where: "tenki" });
      }
      return ready(answer.session, create.signal);
    },
    async connect(sandboxId, connect) {
      const { session } = await api.control<{ session?: TenkiSession }>(
        "GetSession",
        { sessionId: sandboxId },
        { signal: connect?.signal },
      );
      return ready(session ?? { id: sandboxId }, connect?.signal);
    },
    kill(sandboxId) {
      return terminate(api, sandboxId);
    },
    async find(metadata, find) {
      const found: TenkiSession[] = [];
      let pageToken = "";
      do {
        const page = await api.control<{ sessions?: TenkiSession[]; nextPageToken?: string }>(
          "ListSessions",
          { pageSize: 100, pageToken, tags: [TENKI_SESSION_TAG] },
          { signal: find?.signal },
        );
        for (const session of page.sessions ?? []) {
          const labels = session.metadata ?? {};
          if (session.state === RUNNING && Object.entries(metadata).every(([k, v]) => labels[k] === v)) found.push(session);
        }
        pageToken = page.nextPageToken ?? "";
      } while (pageToken);
      return found.sort((a, b) => Date.parse(b.createdAt ?? "0") - Date.parse(a.createdAt ?? "0")).map((s) => s.id);
    },
  };
}
