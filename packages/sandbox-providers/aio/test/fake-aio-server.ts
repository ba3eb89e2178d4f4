/**
 * A loopback stand-in for agent-infra's AIO sandbox and for the provisioner, for tests. Each provisioned
 * sandbox is a real temporary folder that plays the container's home; `/v1/bash/exec` runs `bash -c` there in
 * its own process group, and the file endpoints touch real files. Sandbox APIs are served under
 * `/sandboxes/<id>`, so one server hosts many "containers".
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, realpathSync } from "node:fs";
import { appendFile, cp, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

export interface RecordedRequest {
  method: string;
  path: string;
  traceId: string | undefined;
  authorization: string | undefined;
  body: unknown;
}

interface Command {
  id: string;
  child: ChildProcess;
  stdout: string;
  stderr: string;
  status: "running" | "completed" | "timed_out" | "killed";
  exitCode: number | null;
  done: Promise<void>;
}

interface Session {
  id: string;
  cwd: string;
  command: Command | undefined;
}

interface FakeSandbox {
  id: string;
  threadId: string;
  userId: string;
  home: string;
  sessions: Map<string, Session>;
  /** GETs still answering Pending before Running. */
  pendingPolls: number;
}

export interface FakeServerOptions {
  /** Bearer token the provisioner endpoints require. */
  provisionerApiKey?: string;
  /** How many status GETs answer `Pending` before `Running` (exercises polling). */
  pendingPolls?: number;
  /** Write does not create missing parent folders, like a strict server. Default true. */
  strictWrite?: boolean;
}

export interface InjectedFailure {
  status: number;
  body: unknown;
  /** How many matching requests fail; default 1. */
  times?: number;
}

export class FakeAioServer {
  readonly requests: RecordedRequest[] = [];
  readonly root: string;
  private readonly server: Server;
  private readonly sandboxes = new Map<string, FakeSandbox>();
  private readonly failures = new Map<string, InjectedFailure>();
  private readonly options: FakeServerOptions;
  private port = 0;
  private rootSandbox: string | undefined;
  private deleteGate: Promise<void> | undefined;

  private constructor(options: FakeServerOptions) {
    this.options = options;
    this.root = realpathSync(mkdtempSync(join(tmpdir(), "antler-aio-fake-")));
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) send(res, 500, { detail: String(error) });
        else res.end();
      });
    });
  }

  static async start(options: FakeServerOptions = {}): Promise<FakeAioServer> {
    const fake = new FakeAioServer(options);
    await new Promise<void>((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
    fake.port = (fake.server.address() as AddressInfo).port;
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Registers a sandbox directly (no provisioner), returning its AIO base URL. */
  async addSandbox(id = `direct-${randomUUID().slice(0, 8)}`): Promise<{ id: string; baseUrl: string; home: string }> {
    const box = await this.makeSandbox(id, "direct", "direct");
    return { id, baseUrl: `${this.url}/sandboxes/${id}`, home: box.home };
  }

  /** Also serves this sandbox's API at the server root (`/v1/...`), like a container on its own port. */
  serveAtRoot(id: string): void {
    this.rootSandbox = id;
  }

  /**
   * Holds every DELETE after it is received and before the sandbox goes, like a provisioner that takes a while
   * to tear a container down; the returned function lets them through.
   */
  holdDeletes(): () => void {
    let release: () => void = () => {};
    this.deleteGate = new Promise<void>((resolve) => {
      release = () => {
        this.deleteGate = undefined;
        resolve();
      };
    });
    return release;
  }

  /** Live sandbox ids (created and not deleted). */
  liveSandboxes(): string[] {
    return [...this.sandboxes.keys()];
  }

  /** The next request whose path ends with `pathSuffix` fails with this status and body. */
  fail(pathSuffix: string, failure: InjectedFailure): void {
    this.failures.set(pathSuffix, failure);
  }

  count(method: string, pathPattern: RegExp): number {
    return this.requests.filter((r) => r.method === method && pathPattern.test(r.path)).length;
  }

  async close(): Promise<void> {
    for (const box of this.sandboxes.values()) this.killAll(box);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.root, { recursive: true, force: true });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.url);
    const raw = await readBody(req);
    let body: unknown = null;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
      } catch {
        send(res, 400, { detail: "body is not JSON" });
        return;
      }
    }
    const method = req.method ?? "GET";
    this.requests.push({
      method,
      path: url.pathname,
      traceId: header(req, "x-trace-id"),
      authorization: header(req, "authorization"),
      body,
    });
    for (const [suffix, failure] of this.failures) {
      if (url.pathname.endsWith(suffix)) {
        const left = (failure.times ?? 1) - 1;
        if (left <= 0) this.failures.delete(suffix);
        else failure.times = left;
        send(res, failure.status, failure.body);
        return;
      }
    }
    if (url.pathname.startsWith("/api/sandboxes")) {
      await this.provisioner(req, res, url, method, body);
      return;
    }
    const rooted = this.rootSandbox && url.pathname.startsWith("/v1/") ? `/sandboxes/${this.rootSandbox}${url.pathname}` : url.pathname;
    const match = /^\/sandboxes\/([^/]+)(\/v1\/.*)$/.exec(rooted);
    const box = match ? this.sandboxes.get(match[1] as string) : undefined;
    if (!match || !box) {
      send(res, 404, { detail: "Not Found" });
      return;
    }
    await this.aio(box, match[2] as string, url, method, asRecord(body), res);
  }

  // ---- provisioner --------------------------------------------------------------------------------------------

  private async provisioner(req: IncomingMessage, res: ServerResponse, url: URL, method: string, body: unknown): Promise<void> {
    if (this.options.provisionerApiKey && header(req, "authorization") !== `Bearer ${this.options.provisionerApiKey}`) {
      send(res, 401, { detail: "invalid API key" });
      return;
    }
    const id = decodeURIComponent(url.pathname.slice("/api/sandboxes/".length));
    if (method === "POST" && url.pathname === "/api/sandboxes") {
      const b = asRecord(body);
      if (typeof b.thread_id !== "string" || typeof b.user_id !== "string") {
        send(res, 422, { detail: [{ loc: ["body", "thread_id"], msg: "Field required", type: "missing" }] });
        return;
      }
      const sandboxId = typeof b.sandbox_id === "string" ? b.sandbox_id : `sbx-${randomUUID().slice(0, 8)}`;
      let box = this.sandboxes.get(sandboxId);
      if (box && (box.threadId !== b.thread_id || box.userId !== b.user_id)) {
        send(res, 409, { detail: `sandbox ${sandboxId} belongs to another thread` });
        return;
      }
      box ??= await this.makeSandbox(sandboxId, b.thread_id, b.user_id, Array.isArray(b.mounts) ? b.mounts : []);
      send(res, 200, this.describe(box, true));
      return;
    }
    const box = this.sandboxes.get(id);
    if (!box) {
      send(res, 404, { detail: `sandbox ${id} not found` });
      return;
    }
    if (method === "GET") {
      send(res, 200, this.describe(box, false));
      return;
    }
    if (method === "DELETE") {
      await this.deleteGate;
      this.killAll(box);
      this.sandboxes.delete(id);
      await rm(join(this.root, id), { recursive: true, force: true });
      send(res, 200, { ok: true, sandbox_id: id });
      return;
    }
    send(res, 405, { detail: "method not allowed" });
  }

  private describe(box: FakeSandbox, creating: boolean): Record<string, unknown> {
    let status = "Running";
    if (box.pendingPolls > 0) {
      status = "Pending";
      if (!creating) box.pendingPolls--;
    }
    return {
      sandbox_id: box.id,
      sandbox_url: status === "Running" ? `${this.url}/sandboxes/${box.id}` : null,
      status,
      thread_id: box.threadId,
      user_id: box.userId,
    };
  }

  /**
   * `mounts` as a provisioner's container would show them: each host folder appears at its virtual path's place
   * in the container layout (`/mnt/skills/x` -> `<home>/skills/x`). A copy stands in for the bind mount.
   */
  private async makeSandbox(id: string, threadId: string, userId: string, mounts: unknown[] = []): Promise<FakeSandbox> {
    const home = join(this.root, id, "home", "gem");
    await mkdir(home, { recursive: true });
    for (const mount of mounts) {
      const m = asRecord(mount);
      if (typeof m.host_path !== "string" || typeof m.container_path !== "string" || !m.container_path.startsWith("/mnt/")) continue;
      const target = join(home, m.container_path.slice("/mnt/".length));
      await mkdir(target, { recursive: true });
      await cp(m.host_path, target, { recursive: true }).catch(() => undefined);
    }
    const box: FakeSandbox = { id, threadId, userId, home, sessions: new Map(), pendingPolls: this.options.pendingPolls ?? 0 };
    this.sandboxes.set(id, box);
    return box;
  }

  // ---- AIO API ------------------------------------------------------------------------------------------------

  private async aio(
    box: FakeSandbox,
    path: string,
    url: URL,
    method: string,
    b: Record<string, unknown>,
    res: ServerResponse,
  ): Promise<void> {
    if (method === "GET" && path === "/v1/sandbox") {
      send(res, 200, {
        success: true,
        home_dir: box.home,
        workspace: box.home,
        version: "1.9.4-fake",
        detail: { system: {}, runtime: {}, utils: [] },
      });
      return;
    }
    if (method === "GET" && path === "/v1/file/download") {
      const file = url.searchParams.get("path") ?? "";
      try {
        const bytes = await readFile(file);
        res.writeHead(200, { "content-type": "application/octet-stream" });
        res.end(bytes);
      } catch {
        send(res, 404, { success: false, message: `File not found: ${file}` });
      }
      return;
    }
    if (method !== "POST") {
      send(res, 405, { detail: "Method Not Allowed" });
      return;
    }
    switch (path) {
      case "/v1/bash/sessions/create": {
        const id = typeof b.session_id === "string" && b.session_id ? b.session_id : randomUUID();
        const cwd = typeof b.exec_dir === "string" ? b.exec_dir : box.home;
        box.sessions.set(id, { id, cwd, command: undefined });
        send(
          res,
          200,
          ok({
            session_id: id,
            status: "ready",
            working_dir: cwd,
            created_at: new Date().toISOString(),
            last_used_at: new Date().toISOString(),
          }),
        );
        return;
      }
      case "/v1/bash/exec":
        await this.exec(box, b, res);
        return;
      case "/v1/bash/output":
        await this.output(box, b, res);
        return;
      case "/v1/bash/kill": {
        const session = box.sessions.get(String(b.session_id));
        const command = session?.command;
        if (command?.status === "running") {
          command.status = "killed";
          killGroup(command.child, typeof b.signal === "string" ? (b.signal as NodeJS.Signals) : "SIGTERM");
        }
        send(res, 200, ok(null));
        return;
      }
      default:
        break;
    }
    const close = /^\/v1\/bash\/sessions\/([^/]+)\/close$/.exec(path);
    if (close) {
      const session = box.sessions.get(decodeURIComponent(close[1] as string));
      if (session?.command?.status === "running") killGroup(session.command.child, "SIGKILL");
      box.sessions.delete(decodeURIComponent(close[1] as string));
      send(res, 200, ok(null));
      return;
    }
    const file = typeof b.file === "string" ? b.file : typeof b.path === "string" ? b.path : "";
    try {
      switch (path) {
        case "/v1/file/read": {
          const text = await readFile(file, "utf8");
          const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
          const start = typeof b.start_line === "number" ? b.start_line : 0;
          const end = typeof b.end_line === "number" ? b.end_line : lines.length;
          const content = b.start_line === undefined && b.end_line === undefined ? text : lines.slice(start, end).join("");
          send(res, 200, ok({ content, file }));
          return;
        }
        case "/v1/file/write": {
          const bytes = b.encoding === "base64" ? Buffer.from(String(b.content), "base64") : Buffer.from(String(b.content), "utf8");
          if (this.options.strictWrite === false) await mkdir(join(file, ".."), { recursive: true });
          if (b.append === true) await appendFile(file, bytes);
          else await writeFile(file, bytes);
          send(res, 200, ok({ file, bytes_written: bytes.byteLength }));
          return;
        }
        case "/v1/file/list": {
          const maxDepth = typeof b.max_depth === "number" ? b.max_depth : b.recursive === true ? 64 : 1;
          const files = await walk(file, maxDepth);
          const infos = await Promise.all(
            files.map(async (p) => {
              const s = await stat(p);
              return {
                name: p.slice(p.lastIndexOf("/") + 1),
                path: p,
                is_directory: s.isDirectory(),
                size: s.size,
                modified_time: s.mtime.toISOString(),
              };
            }),
          );
          send(res, 200, ok({ path: file, files: infos, total_count: infos.length }));
          return;
        }
        case "/v1/file/glob": {
          const pattern = globToRegExp(String(b.pattern));
          const all = await walk(file, 64);
          const hits: Array<{ path: string; name: string; is_directory: boolean }> = [];
          for (const p of all) {
            if ((await stat(p)).isDirectory()) continue;
            if (pattern.test(relative(file, p))) hits.push({ path: p, name: p.slice(p.lastIndexOf("/") + 1), is_directory: false });
          }
          hits.sort((x, y) => (x.path < y.path ? -1 : 1));
          const max = typeof b.max_results === "number" ? b.max_results : 5000;
          send(
            res,
            200,
            ok({ path: file, pattern: b.pattern, files: hits.slice(0, max), total_count: hits.length, truncated: hits.length > max }),
          );
          return;
        }
        case "/v1/file/grep": {
          const regex = new RegExp(String(b.pattern), b.case_insensitive === true ? "i" : "");
          const include = Array.isArray(b.include) ? b.include.map((g) => globToRegExp(String(g))) : [];
          const max = typeof b.max_results === "number" ? b.max_results : 500;
          const matches: Array<{ file: string; line_number: number; line_content: string }> = [];
          for (const p of (await walk(file, 64)).sort()) {
            if ((await stat(p)).isDirectory()) continue;
            const name = p.slice(p.lastIndexOf("/") + 1);
            if (include.length > 0 && !include.some((g) => g.test(name))) continue;
            const lines = (await readFile(p, "utf8")).split("\n");
            lines.forEach((line, i) => {
              if (matches.length < max && regex.test(line)) matches.push({ file: p, line_number: i + 1, line_content: line });
            });
          }
          send(res, 200, ok({ path: file, pattern: b.pattern, matches, match_count: matches.length, truncated: false }));
          return;
        }
        default:
          send(res, 404, { detail: "Not Found" });
      }
    } catch (error) {
      const err = error as NodeJS.ErrnoException;
      const operation = path.slice("/v1/file/".length);
      send(res, 200, {
        success: false,
        message: `${operation} failed`,
        data: {
          path: file,
          operation,
          message: err.message,
          error_type: err.code === "ENOENT" ? "not_found" : "os_error",
          retryable: false,
          errno: typeof err.errno === "number" ? -err.errno : null,
          errno_name: err.code ?? null,
        },
      });
    }
  }

  private async exec(box: FakeSandbox, b: Record<string, unknown>, res: ServerResponse): Promise<void> {
    const sessionId = typeof b.session_id === "string" && b.session_id ? b.session_id : randomUUID();
    let session = box.sessions.get(sessionId);
    if (!session) {
      session = { id: sessionId, cwd: box.home, command: undefined };
      box.sessions.set(sessionId, session);
    }
    if (typeof b.exec_dir === "string") session.cwd = b.exec_dir;
    const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: box.home, LANG: "C.UTF-8" };
    if (b.env && typeof b.env === "object") Object.assign(env, b.env);
    const child = spawn("bash", ["-c", String(b.command)], { cwd: session.cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const command: Command = {
      id: randomUUID(),
      child,
      stdout: "",
      stderr: "",
      status: "running",
      exitCode: null,
      done: Promise.resolve(),
    };
    command.done = new Promise<void>((resolve) => {
      child.stdout?.on("data", (d: Buffer) => {
        command.stdout += d.toString("utf8");
      });
      child.stderr?.on("data", (d: Buffer) => {
        command.stderr += d.toString("utf8");
      });
      child.on("error", (e) => {
        command.stderr += String(e);
        command.status = "killed";
        resolve();
      });
      child.on("close", (code, signal) => {
        if (command.status === "running") command.status = "completed";
        command.exitCode = code ?? (signal ? -(signalNumber(signal) ?? 9) : null);
        resolve();
      });
    });
    session.command = command;
    let hardTimer: NodeJS.Timeout | undefined;
    if (typeof b.hard_timeout === "number") {
      hardTimer = setTimeout(() => {
        if (command.status === "running") {
          command.status = "timed_out";
          killGroup(child, "SIGKILL");
        }
      }, b.hard_timeout * 1000);
    }
    command.done.finally(() => clearTimeout(hardTimer));
    const wait = typeof b.timeout === "number" ? b.timeout * 1000 : 600_000;
    await Promise.race([command.done, delay(wait)]);
    send(res, 200, ok(this.commandView(session, command)));
  }

  private async output(box: FakeSandbox, b: Record<string, unknown>, res: ServerResponse): Promise<void> {
    const session = box.sessions.get(String(b.session_id));
    const command = session?.command;
    if (!session || !command) {
      send(res, 404, { success: false, message: "session not found" });
      return;
    }
    const offset = typeof b.offset === "number" ? b.offset : 0;
    const stderrOffset = typeof b.stderr_offset === "number" ? b.stderr_offset : 0;
    if (b.wait === true && command.status === "running" && Buffer.byteLength(command.stdout) === offset) {
      const waitMs = (typeof b.wait_timeout === "number" ? b.wait_timeout : 30) * 1000;
      await Promise.race([command.done, delay(waitMs)]);
    }
    const out = Buffer.from(command.stdout);
    const err = Buffer.from(command.stderr);
    send(
      res,
      200,
      ok({
        session_id: session.id,
        stdout: out.subarray(offset).toString("utf8"),
        stderr: err.subarray(stderrOffset).toString("utf8"),
        offset: out.byteLength,
        stderr_offset: err.byteLength,
        command: {
          command_id: command.id,
          command: "",
          status: command.status,
          exit_code: command.status === "completed" ? command.exitCode : null,
        },
      }),
    );
  }

  private commandView(session: Session, command: Command): Record<string, unknown> {
    return {
      session_id: session.id,
      command_id: command.id,
      command: "",
      status: command.status,
      stdout: command.stdout,
      stderr: command.stderr || null,
      exit_code: command.status === "running" ? null : command.exitCode,
      offset: Buffer.byteLength(command.stdout),
      stderr_offset: Buffer.byteLength(command.stderr),
    };
  }

  private killAll(box: FakeSandbox): void {
    for (const session of box.sessions.values()) {
      if (session.command?.status === "running") killGroup(session.command.child, "SIGKILL");
    }
  }
}

function ok(data: unknown): Record<string, unknown> {
  return { success: true, message: "Operation successful", data };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

function signalNumber(signal: NodeJS.Signals): number | undefined {
  const table: Partial<Record<NodeJS.Signals, number>> = { SIGKILL: 9, SIGTERM: 15, SIGINT: 2 };
  return table[signal];
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Paths under `dir` (not `dir` itself) down to `maxDepth` levels. */
async function walk(dir: string, maxDepth: number, depth = 1): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const out: string[] = [];
  for (const entry of entries) {
    const p = join(dir, entry.name);
    out.push(p);
    if (entry.isDirectory() && depth < maxDepth) out.push(...(await walk(p, maxDepth, depth + 1)));
  }
  return out;
}

function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*" && glob[i + 1] === "*") {
      if (glob[i + 2] === "/") {
        re += "(?:.*/)?";
        i += 2;
      } else {
        re += ".*";
        i += 1;
      }
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}
