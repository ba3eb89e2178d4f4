import { randomBytes } from "node:crypto";
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { createFolderRemote, type FolderRemote, type RemoteSandbox } from "@antler/sandbox-e2b";

export interface RecordedCall {
  plane: "control" | "data";
  method: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

interface StoredSession {
  id: string;
  state: string;
  createdAt: string;
  name: string;
  metadata: Record<string, string>;
  tags: string[];
  remote: RemoteSandbox;
  /** GetSession calls still to answer CREATING before the session is RUNNING. */
  startPolls: number;
}

export interface Fault {
  method: string;
  times: number;
  status?: number;
  code?: string;
  hangMs?: number;
}

export interface TenkiStandIn {
  readonly apiUrl: string;
  readonly calls: RecordedCall[];
  readonly sessions: Map<string, StoredSession>;
  readonly folder: FolderRemote;
  fail(fault: Fault): void;
  /** Every issued data-plane credential stops working (as after a rotation). */
  revokeCredentials(): void;
  /** The service loses the session: it answers not_found from now on. */
  drop(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

const GO_MODE_DIR = 0x80000000;
const GO_MODE_SYMLINK = 0x8000000;

function connectError(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ code, message }));
}

function sessionJson(s: StoredSession): Record<string, unknown> {
  return {
    id: s.id,
    state: s.state,
    createdAt: s.createdAt,
    name: s.name,
    metadata: s.metadata,
    tags: s.tags,
    ownerType: "SERVICE",
    ownerId: "svc_1",
  };
}

/** Seconds of a protobuf JSON duration ("1.5s"). */
function seconds(value: unknown): number | undefined {
  if (typeof value !== "string" || !/^\d+(\.\d+)?s$/.test(value)) return undefined;
  return Number(value.slice(0, -1));
}

/**
 * A loopback stand-in for Tenki's ConnectRPC API in its JSON form, written from the message definitions of
 * Tenki's Go SDK (tenki/sandbox/v1): the control plane (`tenki.sandbox.v1.SandboxService/*`, key auth by prefix)
 * and a data plane under `/dp` (`...SandboxSessionDataPlaneService/*`, `x-tenki-session-cert` credentials minted
 * by `CreateSessionCredential`). Commands really run (`sh -c` in a per-session host folder, its `/tmp` and `/mnt`
 * mapped into it) and files are really stored.
 */
export async function startTenkiStandIn(options: { key: string; pageSize?: number; startPolls?: number }): Promise<TenkiStandIn> {
  const root = await mkdtemp(join(tmpdir(), "antler-tenki-standin-"));
  const folder = createFolderRemote({ root: join(root, "vms") });
  const calls: RecordedCall[] = [];
  const sessions = new Map<string, StoredSession>();
  const credentials = new Map<string, { sessionId: string; expiresAt: number }>();
  const faults: Fault[] = [];
  let origin = "";

  const host = (s: StoredSession, path: string) => join(folder.sandboxDir(s.remote.sandboxId), posix.resolve("/", path));

  const credentialFor = (sessionId: string) => {
    const token = `cert_${randomBytes(12).toString("hex")}`;
    const expiresAt = Date.now() + 10 * 60_000;
    credentials.set(token, { sessionId, expiresAt });
    return {
      credential: { credential: token, expiresAt: new Date(expiresAt).toISOString() },
      dataPlaneEndpoint: `${origin}/dp`,
      routeStatus: "DATA_PLANE_ROUTE_STATUS_VERIFIED",
    };
  };

  async function control(method: string, body: Record<string, unknown>, res: ServerResponse): Promise<void> {
    const reply = (value: unknown): void => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
    };
    const sessionOf = () => {
      const s = sessions.get(String(body.sessionId ?? ""));
      if (!s || s.state === "SESSION_STATE_TERMINATED") {
        connectError(res, 404, "not_found", `session ${String(body.sessionId)} not found`);
        return undefined;
      }
      return s;
    };
    switch (method) {
      case "CreateSession": {
        if (!["SERVICE", "USER"].includes(String(body.ownerType)) || !body.ownerId) {
          return connectError(res, 400, "invalid_argument", "owner_type: must be SERVICE or USER; owner_id: value is empty");
        }
        const id = `sess_${randomBytes(8).toString("hex")}`;
        const session: StoredSession = {
          id,
          state: (options.startPolls ?? 0) > 0 ? "SESSION_STATE_CREATING" : "SESSION_STATE_RUNNING",
          createdAt: new Date().toISOString(),
          name: String(body.name ?? ""),
          metadata: { ...((body.metadata as Record<string, string>) ?? {}) },
          tags: [...((body.tags as string[]) ?? [])],
          remote: await folder.create({ timeoutMs: 0 }),
          startPolls: options.startPolls ?? 0,
        };
        sessions.set(id, session);
        return reply({ session: sessionJson(session), ...credentialFor(id) });
      }
      case "GetSession": {
        const s = sessionOf();
        if (!s) return;
        if (s.startPolls > 0 && --s.startPolls === 0) s.state = "SESSION_STATE_RUNNING";
        return reply({ session: sessionJson(s) });
      }
      case "ListSessions": {
        const tags = (body.tags as string[] | undefined) ?? [];
        const all = [...sessions.values()].filter((s) => s.state !== "SESSION_STATE_TERMINATED" && tags.every((t) => s.tags.includes(t)));
        const size = Math.min(options.pageSize ?? 1000, Number(body.pageSize ?? 100) || 100);
        const start = Number(body.pageToken || 0);
        return reply({
          sessions: all.slice(start, start + size).map(sessionJson),
          nextPageToken: start + size < all.length ? String(start + size) : "",
        });
      }
      case "CreateSessionCredential": {
        const s = sessionOf();
        if (!s) return;
        return reply(credentialFor(s.id));
      }
      case "TerminateSession": {
        const s = sessionOf();
        if (!s) return;
        s.state = "SESSION_STATE_TERMINATED";
        await s.remote.kill();
        return reply({});
      }
      case "ExecuteCommand": {
        const s = sessionOf();
        if (!s) return;
        const args = (body.args as string[]) ?? [];
        if (body.command !== "/bin/sh" || args[0] !== "-c" || typeof args[1] !== "string") {
          return connectError(res, 400, "invalid_argument", "this stand-in runs `/bin/sh -c <script>` only");
        }
        // The VM's own /tmp lives in its folder, like its /mnt.
        await mkdir(host(s, "/tmp"), { recursive: true });
        const script = args[1].split("/tmp/antler-exec-").join(`${host(s, "/tmp")}/antler-exec-`);
        const limit = seconds(body.timeout);
        const started = Date.now();
        const result = await s.remote.run(script, {
          env: body.env as Record<string, string> | undefined,
          ...(limit !== undefined ? { timeoutMs: limit * 1000 } : {}),
        });
        // Output names VM paths, as in a real VM: the host folder standing in for its root is taken out again.
        const vmRoot = folder.sandboxDir(s.remote.sandboxId);
        for (const capture of args[1].match(/\/tmp\/antler-exec-[0-9a-f]+\.(?:out|err)/g) ?? []) {
          const text = await readFile(host(s, capture), "utf8").catch(() => undefined);
          if (text?.includes(vmRoot)) await writeFile(host(s, capture), text.split(vmRoot).join(""));
        }
        const status = result.timedOut
          ? "COMMAND_STATUS_TIMED_OUT"
          : result.exitCode === 0
            ? "COMMAND_STATUS_SUCCEEDED"
            : "COMMAND_STATUS_FAILED";
        return reply({
          execution: {
            id: `cmd_${randomBytes(6).toString("hex")}`,
            sessionId: s.id,
            command: body.command,
            args,
            status,
            exitCode: result.exitCode ?? -1,
            durationMs: String(Date.now() - started),
          },
        });
      }
      default:
        return connectError(res, 501, "unimplemented", `${method} is not part of this stand-in`);
    }
  }

  async function data(method: string, body: Record<string, unknown>, cert: string | undefined, res: ServerResponse): Promise<void> {
    const request = (body.request ?? {}) as Record<string, unknown>;
    const issued = cert ? credentials.get(cert) : undefined;
    if (!issued || issued.expiresAt < Date.now() || issued.sessionId !== request.sessionId) {
      return connectError(res, 401, "unauthenticated", "missing or invalid session certificate");
    }
    const s = sessions.get(issued.sessionId);
    if (!s || s.state === "SESSION_STATE_TERMINATED") return connectError(res, 404, "not_found", "session not found");
    const path = String(request.path ?? "");
    if (!path.startsWith("/")) return connectError(res, 400, "invalid_argument", "path must be absolute");
    const target = host(s, path);
    const reply = (value: unknown): void => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ response: value }));
    };
    try {
      switch (method) {
        case "ReadFile":
          return reply({ path, content: (await readFile(target)).toString("base64") });
        case "WriteFile": {
          const bytes = Buffer.from(String(request.content ?? ""), "base64");
          await writeFile(target, bytes); // no parent folders made: that is Mkdir's job
          return reply({ path, sizeBytes: String(bytes.byteLength) });
        }
        case "Mkdir":
          await mkdir(target, { recursive: request.recursive === true });
          return reply({});
        case "Remove":
          await lstat(target);
          await rm(target, { recursive: request.recursive === true });
          return reply({});
        case "List": {
          const entries = [];
          for (const name of await readdir(target)) {
            if (!request.includeHidden && name.startsWith(".")) continue;
            const info = await lstat(join(target, name));
            const mode = (info.mode & 0o777) | (info.isDirectory() ? GO_MODE_DIR : 0) | (info.isSymbolicLink() ? GO_MODE_SYMLINK : 0);
            entries.push({
              name,
              isDir: info.isDirectory(),
              size: String(info.size),
              mode: mode >>> 0,
              modifiedUnixNs: String(BigInt(Math.floor(info.mtimeMs)) * 1_000_000n),
            });
          }
          return reply({ entries });
        }
        default:
          return connectError(res, 501, "unimplemented", `${method} is not part of this stand-in`);
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return connectError(res, 404, "not_found", `${path}: no such file or directory`);
      if (code === "EISDIR" || code === "ENOTDIR") return connectError(res, 400, "failed_precondition", `${path}: ${code}`);
      throw err;
    }
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const url = new URL(req.url ?? "/", "http://stand-in");
        const dataPlane = url.pathname.startsWith("/dp/tenki.sandbox.v1.SandboxSessionDataPlaneService/");
        const controlPlane = url.pathname.startsWith("/tenki.sandbox.v1.SandboxService/");
        const method = url.pathname.split("/").at(-1) ?? "";
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>;
        } catch {
          return connectError(res, 400, "invalid_argument", "body is not JSON");
        }
        calls.push({ plane: dataPlane ? "data" : "control", method, headers: req.headers, body });
        const fault = faults.find((f) => f.times > 0 && f.method === method);
        if (fault) {
          fault.times--;
          if (fault.hangMs) await new Promise((r) => setTimeout(r, fault.hangMs));
          if (fault.status) return connectError(res, fault.status, fault.code ?? "unavailable", "scripted failure");
        }
        if (
          req.method !== "POST" ||
          req.headers["connect-protocol-version"] !== "1" ||
          !(req.headers["content-type"] ?? "").startsWith("application/json")
        ) {
          return connectError(res, 415, "invalid_argument", "Connect unary JSON only: POST, application/json, Connect-Protocol-Version: 1");
        }
        if (controlPlane) {
          if (req.headers.authorization !== `Bearer ${options.key}`) return connectError(res, 401, "unauthenticated", "invalid API key");
          return control(method, body, res);
        }
        if (dataPlane) return data(method, body, req.headers["x-tenki-session-cert"] as string | undefined, res);
        return connectError(res, 404, "not_found", `no route ${url.pathname}`);
      })().catch((err: unknown) => {
        if (!res.headersSent) connectError(res, 500, "internal", String((err as Error)?.message ?? err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    apiUrl: origin,
    calls,
    sessions,
    folder,
    fail: (fault) => faults.push(fault),
    revokeCredentials: () => credentials.clear(),
    async drop(sessionId) {
      const s = sessions.get(sessionId);
      sessions.delete(sessionId);
      await s?.remote.kill();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(root, { recursive: true, force: true });
    },
  };
}
