import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, posix } from "node:path";
import { promisify } from "node:util";
import { createFolderRemote, type FolderRemote, type RemoteRunResult, type RemoteSandbox } from "@antler/sandbox-e2b";

const run = promisify(execFile);

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage["headers"];
  json?: unknown;
}

interface StoredBox {
  box_id: string;
  name: string | null;
  status: "configured" | "running" | "stopped";
  created_at: string;
  updated_at: string;
  image: string;
  cpus: number;
  memory_mib: number;
  remote: RemoteSandbox;
  request: Record<string, unknown>;
}

interface Execution {
  id: string;
  done: Promise<RemoteRunResult>;
  result?: RemoteRunResult;
  controller: AbortController;
  killed: boolean;
  started: number;
}

/** One scripted failure: the next `times` requests matching `method` and `path` get `status` (or hang for `hangMs`). */
export interface Fault {
  method: string;
  path: RegExp;
  times: number;
  status?: number;
  hangMs?: number;
}

export interface BoxLiteStandIn {
  /** Base URL up to `/v1`. */
  readonly apiUrl: string;
  readonly requests: RecordedRequest[];
  readonly boxes: Map<string, StoredBox>;
  readonly folder: FolderRemote;
  fail(fault: Fault): void;
  /** Removes a box behind the client's back (the service lost it). */
  drop(boxId: string): Promise<void>;
  close(): Promise<void>;
}

const ULID_CHARS = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

function ulid(): string {
  return Array.from(randomBytes(26), (b) => ULID_CHARS[b % 32]).join("");
}

function sendError(res: ServerResponse, code: number, type: string, message: string): void {
  res.writeHead(code, { "content-type": "application/json" }).end(JSON.stringify({ error: { message, type, code } }));
}

function boxJson(box: StoredBox): Record<string, unknown> {
  const { remote: _remote, request: _request, ...rest } = box;
  return rest;
}

/**
 * A loopback stand-in for BoxLite's REST API (openapi/rest-sandbox-open-api.yaml): bearer auth, boxes under
 * `/v1/{prefix}/boxes`, async exec with an SSE output stream, tar file transfer, idempotency keys. Commands
 * really run (through `createFolderRemote`: `sh -c` in a per-box host folder) and files are really stored; tar
 * archives are packed and unpacked by the system `tar`, so the client's tar code meets a real implementation.
 */
export async function startBoxLiteStandIn(options: { token: string; prefix?: string; pageSize?: number }): Promise<BoxLiteStandIn> {
  const root = await mkdtemp(join(tmpdir(), "antler-boxlite-standin-"));
  const folder = createFolderRemote({ root: join(root, "boxes") });
  const prefix = options.prefix ?? "default";
  const requests: RecordedRequest[] = [];
  const boxes = new Map<string, StoredBox>();
  const executions = new Map<string, Execution>();
  const idempotent = new Map<string, { status: number; body: string }>();
  const faults: Fault[] = [];

  const hostPath = (box: StoredBox, path: string): string => join(folder.sandboxDir(box.remote.sandboxId), posix.resolve("/", path));

  async function handle(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const url = new URL(req.url ?? "/", "http://stand-in");
    const record: RecordedRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
    };
    if ((req.headers["content-type"] ?? "").startsWith("application/json") && body.length) record.json = JSON.parse(body.toString("utf8"));
    requests.push(record);

    const fault = faults.find((f) => f.times > 0 && f.method === record.method && f.path.test(record.path));
    if (fault) {
      fault.times--;
      if (fault.hangMs) await new Promise((r) => setTimeout(r, fault.hangMs));
      if (fault.status) return sendError(res, fault.status, "InternalError", "scripted failure");
    }
    if (req.headers.authorization !== `Bearer ${options.token}`)
      return sendError(res, 401, "UnauthorizedError", "invalid or expired access token");

    const base = `/v1/${prefix}/boxes`;
    if (!record.path.startsWith(base)) return sendError(res, 404, "NotFoundError", `no route ${record.path}`);
    const key = req.headers["idempotency-key"];
    if (record.method === "POST" && typeof key === "string") {
      const seen = idempotent.get(key);
      if (seen) {
        res.writeHead(seen.status, { "content-type": "application/json" }).end(seen.body);
        return;
      }
    }
    const reply = (status: number, value: unknown) => {
      const text = JSON.stringify(value);
      if (record.method === "POST" && typeof key === "string") idempotent.set(key, { status, body: text });
      res.writeHead(status, { "content-type": "application/json" }).end(text);
    };
    const parts = record.path.slice(base.length).split("/").filter(Boolean).map(decodeURIComponent);

    if (parts.length === 0 && record.method === "POST") {
      const request = (record.json ?? {}) as Record<string, unknown>;
      const name = typeof request.name === "string" ? request.name : null;
      if (name && [...boxes.values()].some((b) => b.name === name)) return sendError(res, 409, "AlreadyExistsError", `box ${name} exists`);
      const now = new Date().toISOString();
      const box: StoredBox = {
        box_id: ulid(),
        name,
        status: "configured",
        created_at: now,
        updated_at: now,
        image: typeof request.image === "string" ? request.image : "alpine:latest",
        cpus: typeof request.cpus === "number" ? request.cpus : 2,
        memory_mib: typeof request.memory_mib === "number" ? request.memory_mib : 512,
        remote: await folder.create({ timeoutMs: 0 }),
        request,
      };
      boxes.set(box.box_id, box);
      return reply(201, boxJson(box));
    }
    if (parts.length === 0 && record.method === "GET") {
      const all = [...boxes.values()];
      const size = Math.min(options.pageSize ?? 1000, Number(record.query.pageSize ?? 100));
      const start = Number(record.query.pageToken ?? 0);
      const page = all.slice(start, start + size);
      return reply(200, { boxes: page.map(boxJson), next_page_token: start + size < all.length ? String(start + size) : null });
    }
    const box = boxes.get(parts[0] ?? "") ?? [...boxes.values()].find((b) => b.name === parts[0]);
    if (!box) return sendError(res, 404, "NotFoundError", `box not found: ${parts[0]}`);
    const rest = parts.slice(1);

    if (rest.length === 0 && record.method === "GET") return reply(200, boxJson(box));
    if (rest.length === 0 && record.method === "DELETE") {
      boxes.delete(box.box_id);
      await box.remote.kill();
      res.writeHead(204).end();
      return;
    }
    if (rest[0] === "start" && record.method === "POST") {
      box.status = "running";
      return reply(200, boxJson(box));
    }
    if (rest[0] === "exec" && rest.length === 1 && record.method === "POST") {
      const request = (record.json ?? {}) as { command?: string; args?: string[]; env?: Record<string, string>; working_dir?: string };
      if (request.command !== "/bin/sh" || request.args?.[0] !== "-c" || typeof request.args[1] !== "string") {
        return sendError(res, 400, "InvalidArgumentError", "this stand-in runs `/bin/sh -c <script>` only");
      }
      box.status = "running";
      const controller = new AbortController();
      const id = `exec-${ulid()}`;
      const execution: Execution = {
        id,
        controller,
        killed: false,
        started: Date.now(),
        done: box.remote
          .run(request.args[1], { env: request.env, cwd: request.working_dir, signal: controller.signal })
          .catch((err: unknown) => ({ exitCode: 137, stdout: "", stderr: String((err as Error)?.message ?? err), timedOut: false })),
      };
      void execution.done.then((result) => (execution.result = result));
      executions.set(id, execution);
      return reply(201, { execution_id: id });
    }
    if (rest[0] === "executions" && rest[1]) {
      const execution = executions.get(rest[1]);
      if (!execution) return sendError(res, 404, "NotFoundError", `execution not found: ${rest[1]}`);
      if (rest[2] === "output" && record.method === "GET") {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        const result = await execution.done;
        if (result.stdout) res.write(`event: stdout\ndata: ${JSON.stringify({ data: Buffer.from(result.stdout).toString("base64") })}\n\n`);
        if (result.stderr) res.write(`event: stderr\ndata: ${JSON.stringify({ data: Buffer.from(result.stderr).toString("base64") })}\n\n`);
        res.end(
          `event: exit\ndata: ${JSON.stringify({ exit_code: execution.killed ? 137 : result.exitCode, duration_ms: Date.now() - execution.started })}\n\n`,
        );
        return;
      }
      if (rest[2] === "signal" && record.method === "POST") {
        execution.killed = true;
        execution.controller.abort();
        res.writeHead(204).end();
        return;
      }
      if (rest.length === 2 && record.method === "GET") {
        const status = execution.result ? (execution.killed ? "killed" : "completed") : "running";
        return reply(200, { execution_id: execution.id, status, exit_code: execution.result?.exitCode ?? null });
      }
    }
    if (rest[0] === "files") {
      const target = hostPath(box, record.query.path ?? "/");
      if (record.method === "PUT") {
        const archive = join(root, `upload-${ulid()}.tar`);
        await writeFile(archive, body);
        try {
          await run("tar", ["-x", "-f", archive, "-C", target]);
        } catch (err) {
          return sendError(res, 400, "InvalidArgumentError", `bad archive: ${(err as Error).message}`);
        } finally {
          await rm(archive, { force: true });
        }
        res.writeHead(204).end();
        return;
      }
      if (record.method === "GET") {
        try {
          await stat(target);
        } catch {
          return sendError(res, 404, "NotFoundError", `no such path: ${record.query.path}`);
        }
        const archive = join(root, `download-${ulid()}.tar`);
        await run("tar", ["-c", "-f", archive, "-C", dirname(target), posix.basename(target)]);
        const { readFile } = await import("node:fs/promises");
        const bytes = await readFile(archive);
        await rm(archive, { force: true });
        res.writeHead(200, { "content-type": "application/x-tar" }).end(bytes);
        return;
      }
    }
    return sendError(res, 404, "NotFoundError", `no route ${record.method} ${record.path}`);
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      handle(req, res, Buffer.concat(chunks)).catch((err: unknown) => {
        if (!res.headersSent) sendError(res, 500, "InternalError", String((err as Error)?.message ?? err));
        else res.end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    boxes,
    folder,
    fail: (fault) => faults.push(fault),
    async drop(boxId) {
      const box = boxes.get(boxId);
      boxes.delete(boxId);
      await box?.remote.kill();
    },
    async close() {
      for (const execution of executions.values()) execution.controller.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(root, { recursive: true, force: true });
    },
  };
}
