import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { LookupFunction } from "../ssrf.js";

/** One request a loopback server received, as sent on the wire. */
export interface RecordedHttpRequest {
  readonly method: string;
  /** Path without the query, e.g. `/search`. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** Raw body text ("" when none). */
  readonly text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: unknown;
}

/** What a handler answers: a status, a body (objects are sent as JSON) and headers; `delayMs` holds the answer back. */
export interface LoopbackReply {
  readonly status?: number | undefined;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly delayMs?: number | undefined;
}

export type LoopbackHandler = (request: RecordedHttpRequest, index: number) => LoopbackReply | Promise<LoopbackReply>;

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  readonly url: string;
  readonly port: number;
  /** Every request received, in order (clear it with `requests.length = 0`; the handler's `index` restarts too). */
  readonly requests: RecordedHttpRequest[];
  /** Replaces the handler (e.g. per test). */
  setHandler(handler: LoopbackHandler): void;
  /**
   * Answers the next requests with these replies, in order, before the handler sees them: a vendor's 429 then
   * its normal answer, a 5xx on every retry, a reply with `delayMs` to make the client time out.
   */
  queue(...replies: LoopbackReply[]): void;
  /** Resolves when the server is closed and every connection is destroyed. */
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function send(res: ServerResponse, reply: LoopbackReply): void {
  const headers: Record<string, string> = { ...(reply.headers ?? {}) };
  let payload: string | Buffer = "";
  if (typeof reply.body === "string") payload = reply.body;
  else if (reply.body instanceof Uint8Array) payload = Buffer.from(reply.body);
  else if (reply.body !== undefined) {
    payload = JSON.stringify(reply.body);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
  }
  res.writeHead(reply.status ?? 200, headers);
  res.end(payload);
}

/**
 * A real HTTP server on 127.0.0.1 that records every request (method, path, query, headers, body) and answers
 * through a handler, after any replies `queue`d for the next requests: the stand-in for a vendor API (or a web
 * page) in provider tests. Replies with `delayMs` are held back (for timeouts). Close it in `afterAll`/`afterEach`.
 */
export async function startLoopbackServer(handler: LoopbackHandler = () => ({ status: 404, body: "no handler" })): Promise<LoopbackServer> {
  let current = handler;
  const requests: RecordedHttpRequest[] = [];
  const queued: LoopbackReply[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      const recorded: RecordedHttpRequest = {
        method: req.method ?? "GET",
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        text,
        json,
      };
      const index = requests.length;
      requests.push(recorded);
      try {
        const reply = queued.shift() ?? (await current(recorded, index));
        if (reply.delayMs) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, reply.delayMs);
            res.on("close", () => {
              clearTimeout(timer);
              resolve();
            });
          });
          if (res.destroyed || res.writableEnded) return;
        }
        send(res, reply);
      } catch (err) {
        send(res, { status: 500, body: { error: String(err) } });
      }
    })();
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    setHandler(next) {
      current = next;
    },
    queue(...replies) {
      queued.push(...replies);
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A local resolver stub for the SSRF guard's `lookup` option: names in `table` resolve to the given addresses,
 * every other name to `fallback` (a public documentation-free address by default), so tests never touch DNS.
 */
export function stubLookup(
  table: Readonly<Record<string, string | readonly string[]>> = {},
  fallback: readonly string[] = ["93.184.215.14"],
): LookupFunction {
  return async (hostname) => {
    const entry = table[hostname.toLowerCase()];
    const addresses = entry === undefined ? fallback : typeof entry === "string" ? [entry] : entry;
    if (addresses.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? (6 as const) : (4 as const) }));
  };
}
