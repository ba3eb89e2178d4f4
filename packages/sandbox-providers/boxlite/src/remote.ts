import { createHash, randomBytes } from "node:crypto";
import { posix } from "node:path";
import { AntlerError, ErrorCodes } from "@antler/kernel";
import type { E2BRemote, RemoteEntry, RemoteInfo, RemoteRunResult, RemoteSandbox } from "@antler/sandbox-e2b";
import { type BoxLiteApi, readEvents } from "./api.js";
import { readTar, tarOneFile } from "./tar.js";

/** A box as the API returns it (the fields this package reads). */
export interface BoxLiteBox {
  box_id: string;
  name?: string | null;
  status: "configured" | "running" | "stopping" | "stopped" | "paused" | "unknown";
  created_at: string;
  image: string;
}

export interface BoxLiteCreateSettings {
  image?: string | undefined;
  cpus?: number | undefined;
  memoryMib?: number | undefined;
}

/**
 * Box names carry the thread, so a restarted process finds the thread's box again: `antler-<hash>-<random>`,
 * where `<hash>` is a digest of (user, thread) (names allow only [a-zA-Z0-9._-] and 128 characters) and the random
 * part lets a replacement box exist while an old one is still being removed.
 */
export function threadBoxNamePrefix(userId: string, threadId: string): string {
  return `antler-${createHash("sha256").update(`${userId}\n${threadId}`).digest("hex").slice(0, 20)}-`;
}

const LIST_PAGE_SIZE = 100;
/** Separates the fields of one `stat -c` line; the name is last, so it may contain it. */
const FIELD = "|";

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** `RemoteSandbox` over one BoxLite box. */
class BoxLiteSandbox implements RemoteSandbox {
  constructor(
    private readonly api: BoxLiteApi,
    readonly sandboxId: string,
  ) {}

  private path(suffix = ""): string {
    return `/boxes/${encodeURIComponent(this.sandboxId)}${suffix}`;
  }

  async run(
    command: string,
    options: {
      timeoutMs?: number | undefined;
      env?: Readonly<Record<string, string>> | undefined;
      cwd?: string | undefined;
      signal?: AbortSignal | undefined;
    } = {},
  ): Promise<RemoteRunResult> {
    const started = await this.api.json<{ execution_id: string }>("POST", this.path("/exec"), {
      json: {
        command: "/bin/sh",
        args: ["-c", command],
        ...(options.env !== undefined && Object.keys(options.env).length ? { env: { ...options.env } } : {}),
        ...(options.cwd !== undefined ? { working_dir: options.cwd } : {}),
        ...(options.timeoutMs !== undefined ? { timeout_seconds: Math.max(0.1, options.timeoutMs / 1000) } : {}),
      },
      signal: options.signal,
    });
    const execPath = this.path(`/executions/${encodeURIComponent(started.execution_id)}`);
    const stop = new AbortController();
    let timedOut = false;
    let killed: Promise<unknown> | undefined;
    // The command is killed in the box, not just abandoned here: a command left running would hold the box busy.
    const kill = () => {
      killed ??= this.api.request("POST", `${execPath}/signal`, { json: { signal: 9 } }).catch(() => undefined);
    };
    const timer =
      options.timeoutMs !== undefined
        ? setTimeout(() => {
            timedOut = true;
            kill();
            stop.abort(new Error("command timed out"));
          }, options.timeoutMs)
        : undefined;
    const onAbort = () => {
      kill();
      stop.abort(options.signal?.reason);
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let exitCode: number | null = null;
    let exited = false;
    try {
      const response = await this.api.request("GET", `${execPath}/output`, {
        accept: "text/event-stream",
        stream: true,
        signal: stop.signal,
      });
      if (response.body) {
        for await (const { event, data } of readEvents(response.body)) {
          const parsed = JSON.parse(data) as { data?: string; exit_code?: number | null };
          if (event === "stdout" && parsed.data) stdout.push(Buffer.from(parsed.data, "base64"));
          else if (event === "stderr" && parsed.data) stderr.push(Buffer.from(parsed.data, "base64"));
          else if (event === "exit") {
            exitCode = parsed.exit_code ?? null;
            exited = true;
            break;
          }
        }
      }
      if (!exited) {
        // The stream ended early (a proxy cut it): the execution's record still has the exit code.
        const info = await this.api.json<{ status: string; exit_code?: number | null }>("GET", execPath, { signal: options.signal });
        exitCode = info.exit_code ?? null;
        timedOut ||= info.status === "timed_out";
      }
    } catch (err) {
      if (!timedOut) {
        options.signal?.throwIfAborted();
        throw err;
      }
    } finally {
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      await killed;
    }
    return {
      exitCode: timedOut ? null : exitCode,
      stdout: Buffer.concat(stdout).toString("utf8"),
      stderr: Buffer.concat(stderr).toString("utf8"),
      timedOut,
    };
  }

  async readFile(path: string, options: { signal?: AbortSignal | undefined } = {}): Promise<Uint8Array> {
    const response = await this.api.request("GET", this.path("/files"), {
      query: { path },
      accept: "application/x-tar",
      signal: options.signal,
    });
    const entries = readTar(new Uint8Array(await response.arrayBuffer()));
    // The archive of a file holds that file first; of a folder, the folder.
    const file = entries[0];
    if (file?.type !== "file") {
      throw new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, `${path} is not a regular file in box ${this.sandboxId}`, { where: "boxlite" });
    }
    return file.bytes;
  }

  async writeFile(path: string, bytes: Uint8Array): Promise<void> {
    // Extracted at `/` with the full path as the entry name, so tar creates the missing parent folders.
    const name = posix.resolve("/", path).slice(1);
    await this.api.request("PUT", this.path("/files"), {
      query: { path: "/", overwrite: true },
      body: tarOneFile(name, bytes),
      contentType: "application/x-tar",
    });
  }

  async list(path: string, depth: number): Promise<RemoteEntry[]> {
    const result = await this.run(
      `find ${shellQuote(path)} -mindepth 1 -maxdepth ${Math.max(1, Math.floor(depth))} -exec stat -c '%F${FIELD}%s${FIELD}%Y${FIELD}%n' {} +`,
      { timeoutMs: 60_000 },
    );
    if (result.exitCode !== 0) {
      throw new AntlerError(
        ErrorCodes.SANDBOX_NOT_FOUND,
        `cannot list ${path} in box ${this.sandboxId}: ${result.stderr.trim() || `exit ${result.exitCode}`}`,
        {
          where: "boxlite",
        },
      );
    }
    const out: RemoteEntry[] = [];
    for (const line of result.stdout.split("\n")) {
      const [kind, size, mtime, ...rest] = line.split(FIELD);
      if (!kind || rest.length === 0) continue;
      const type = kind.startsWith("regular") ? "file" : kind === "directory" ? "dir" : kind === "symbolic link" ? "symlink" : undefined;
      if (!type) continue;
      out.push({ path: rest.join(FIELD), type, size: Number(size) || 0, mtimeMs: Number(mtime) * 1000 || null });
    }
    return out;
  }

  async remove(path: string): Promise<void> {
    const result = await this.run(`rm -rf -- ${shellQuote(path)}`, { timeoutMs: 60_000 });
    if (result.exitCode !== 0) {
      throw new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, `cannot remove ${path}: ${result.stderr.trim()}`, { where: "boxlite" });
    }
  }

  async getInfo(): Promise<RemoteInfo> {
    const box = await this.api.json<BoxLiteBox>("GET", this.path());
    return {
      sandboxId: box.box_id,
      templateId: box.image,
      state: "running",
      startedAt: new Date(box.created_at),
      // BoxLite boxes have no lifetime of their own.
      endAt: new Date(8.64e15),
    };
  }

  async kill(): Promise<boolean> {
    const response = await this.api.request("DELETE", this.path(), { query: { force: true }, allow: [404] });
    return response.status !== 404;
  }
}

/** The `E2BRemote` seam of `@antler/sandbox-e2b` over BoxLite's REST API. */
export function createBoxLiteRemote(api: BoxLiteApi, settings: BoxLiteCreateSettings = {}): E2BRemote {
  const ready = async (box: BoxLiteBox, signal?: AbortSignal): Promise<RemoteSandbox> => {
    // A configured box starts on its first exec anyway; a stopped one (its host restarted) is started here.
    if (box.status === "stopped") await api.request("POST", `/boxes/${encodeURIComponent(box.box_id)}/start`, { signal });
    return new BoxLiteSandbox(api, box.box_id);
  };
  return {
    async create(create) {
      const userId = create.metadata?.antler_user ?? "";
      const threadId = create.metadata?.antler_thread ?? "";
      const box = await api.json<BoxLiteBox>("POST", "/boxes", {
        json: {
          name: `${threadBoxNamePrefix(userId, threadId)}${randomBytes(4).toString("hex")}`,
          ...(settings.image !== undefined ? { image: settings.image } : {}),
          ...(settings.cpus !== undefined ? { cpus: settings.cpus } : {}),
          ...(settings.memoryMib !== undefined ? { memory_mib: settings.memoryMib } : {}),
          // The box must outlive a stop (a host restart) and this process, so a restarted Antler can reattach.
          auto_remove: false,
          detach: true,
        },
        signal: create.signal,
      });
      return ready(box, create.signal);
    },
    async connect(sandboxId, connect) {
      const box = await api.json<BoxLiteBox>("GET", `/boxes/${encodeURIComponent(sandboxId)}`, { signal: connect?.signal });
      return ready(box, connect?.signal);
    },
    async kill(sandboxId) {
      const response = await api.request("DELETE", `/boxes/${encodeURIComponent(sandboxId)}`, { query: { force: true }, allow: [404] });
      return response.status !== 404;
    },
    async find(metadata, find) {
      const prefix = threadBoxNamePrefix(metadata.antler_user ?? "", metadata.antler_thread ?? "");
      const found: BoxLiteBox[] = [];
      let pageToken: string | undefined;
      do {
        const page = await api.json<{ boxes: BoxLiteBox[]; next_page_token?: string | null }>("GET", "/boxes", {
          query: { pageSize: LIST_PAGE_SIZE, pageToken },
          signal: find?.signal,
        });
        for (const box of page.boxes) {
          if (box.name?.startsWith(prefix) && box.status !== "stopping" && box.status !== "unknown") found.push(box);
        }
        pageToken = page.next_page_token ?? undefined;
      } while (pageToken);
      return found.sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at)).map((box) => box.box_id);
    },
  };
}
