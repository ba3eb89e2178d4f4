// `@antler/model-kit/testing`: a loopback HTTP server for provider plugin tests. Each provider test teaches it
// its vendor's wire format (NDJSON, SSE, JSON) in a handler; the server records every request as sent.
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import { createServer as createH2cServer, type Http2ServerRequest, type Http2Session } from "node:http2";
import type { AddressInfo, Socket } from "node:net";

export interface LoopbackRequest {
  readonly method: string;
  /** Path without the query string, e.g. `/api/chat`. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON body; `undefined` without one. */
  readonly body: unknown;
}

export interface LoopbackReply {
  /** Default 200. */
  readonly status?: number;
  readonly headers?: Record<string, string>;
  /** A JSON body. */
  readonly json?: unknown;
  /** Or a streamed body: each piece is written as it is (NDJSON lines, SSE frames, binary event-stream messages), in order. */
  readonly chunks?: ReadonlyArray<string | Uint8Array>;
}

/** Answers request `index` (0, 1, 2, ... in arrival order). */
export type LoopbackHandler = (request: LoopbackRequest, index: number) => LoopbackReply | Promise<LoopbackReply>;

export interface LoopbackApi {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string;
  readonly requests: LoopbackRequest[];
  /** Closes the server and destroys every connection (keep-alive included). */
  close(): Promise<void>;
}

/** What the handler writes to, on HTTP/1.1 and HTTP/2 alike. */
interface LoopbackResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: string | Uint8Array): boolean;
  end(body?: string): unknown;
  destroy(): unknown;
}

export interface LoopbackOptions {
  /**
   * `http1` (default), or `h2c`: HTTP/2 without TLS, for clients that speak only HTTP/2 to their service (the AWS
   * SDK's Bedrock runtime client).
   */
  readonly protocol?: "http1" | "h2c";
}

/** Starts a loopback server on a free port that answers with `handler` and records every request. */
export async function startLoopbackApi(handler: LoopbackHandler, options: LoopbackOptions = {}): Promise<LoopbackApi> {
  const requests: LoopbackRequest[] = [];
  const sockets = new Set<Socket>();
  const sessions = new Set<Http2Session>();
  const answer = (req: IncomingMessage | Http2ServerRequest, res: LoopbackResponse) => {
    const parts: Buffer[] = [];
    req.on("data", (p: Buffer) => parts.push(p));
    req.on("end", () => {
      void (async () => {
        const text = Buffer.concat(parts).toString("utf8");
        const url = new URL(req.url ?? "/", "http://127.0.0.1");
        const request: LoopbackRequest = {
          method: req.method ?? "GET",
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          body: text ? JSON.parse(text) : undefined,
        };
        requests.push(request);
        const reply = await handler(request, requests.length - 1);
        const type = reply.chunks ? "text/plain" : "application/json";
        res.writeHead(reply.status ?? 200, { "content-type": type, ...reply.headers });
        if (reply.chunks) for (const chunk of reply.chunks) res.write(chunk);
        res.end(reply.chunks ? undefined : JSON.stringify(reply.json ?? {}));
      })().catch((error: unknown) => {
        if (res.headersSent) return void res.destroy();
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: `loopback handler failed: ${(error as Error)?.message ?? String(error)}` }));
      });
    });
  };
  const server =
    options.protocol === "h2c"
      ? createH2cServer((req, res) => answer(req, res as unknown as LoopbackResponse))
      : createServer((req, res) => answer(req, res));
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  server.on("session", (s: Http2Session) => {
    sessions.add(s);
    s.once("close", () => sessions.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        for (const s of sessions) s.destroy();
        for (const s of sockets) s.destroy();
      }),
  };
}
