import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { DenialLog } from "./denials.js";
import { type EgressPolicy, egressPolicySchema, withApproval } from "./policy.js";

/** The header that carries the relay token. It is stripped before a request reaches the sandbox. */
export const RELAY_TOKEN_HEADER = "x-antler-relay-token";

export interface ApiRelayOptions {
  /** The only credential the relay accepts; it lives in the sidecar and the provider, never in the sandbox. */
  token: string;
  /** The sandbox's AIO API on the internal network, e.g. `http://antler-aio-…:8080`. */
  upstream: string;
  denials: DenialLog;
  policy: { get(): EgressPolicy; set(policy: EgressPolicy): void };
  log?: (event: string, fields: Record<string, unknown>) => void;
}

const HOP_BY_HOP = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer", RELAY_TOKEN_HEADER];

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * The token-authenticated relay through which the provider reaches the sandbox's AIO API (the sandbox itself has
 * no published port). Paths under `/_antler/` are the sidecar's own control API: denials and the policy.
 */
export class ApiRelay {
  readonly server: Server;
  private readonly expected: Buffer;

  constructor(private readonly options: ApiRelayOptions) {
    if (options.token.length < 16) throw new Error("the relay token must be at least 16 characters");
    this.expected = digest(options.token);
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        options.log?.("relay_error", { err: String(err) });
        if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
        res.end("relay error\n");
      });
    });
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => {
        this.server.off("error", reject);
        const address = this.server.address();
        resolve(typeof address === "object" && address ? address.port : port);
      });
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private authorized(req: IncomingMessage): boolean {
    const given = req.headers[RELAY_TOKEN_HEADER];
    if (typeof given !== "string") return false;
    return timingSafeEqual(digest(given), this.expected);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.authorized(req)) {
      req.resume();
      res.writeHead(401, { "content-type": "text/plain" });
      res.end(`the sidecar relay needs the sandbox's token in ${RELAY_TOKEN_HEADER}\n`);
      return;
    }
    const url = req.url ?? "/";
    if (url.startsWith("/_antler/")) {
      await this.control(req, res, url);
      return;
    }
    const target = new URL(url, this.options.upstream);
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.includes(k)) headers[k] = v;
    headers.host = target.host;
    await new Promise<void>((resolve) => {
      const upstream = httpRequest(target, { method: req.method ?? "GET", headers }, (answer) => {
        const out: Record<string, string | string[]> = {};
        for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP_BY_HOP.includes(k)) out[k] = v;
        res.writeHead(answer.statusCode ?? 502, out);
        answer.pipe(res);
        answer.on("end", resolve);
        answer.on("error", () => {
          res.destroy();
          resolve();
        });
      });
      upstream.on("error", (err) => {
        if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
        res.end(`the sandbox's API did not answer (${(err as { code?: string }).code ?? err.message})\n`);
        resolve();
      });
      req.pipe(upstream);
    });
  }

  private async control(req: IncomingMessage, res: ServerResponse, url: string): Promise<void> {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const method = req.method ?? "GET";
    const body = method === "GET" ? undefined : await readJson(req);
    if (url === "/_antler/health" && method === "GET") return json(200, { ok: true });
    if (url === "/_antler/denials" && method === "GET") return json(200, { denials: this.options.denials.list() });
    if (url === "/_antler/denials/claim" && method === "POST") return json(200, { denial: this.options.denials.claimOldest() ?? null });
    if (url === "/_antler/denials/drain" && method === "POST") return json(200, { denials: this.options.denials.drain() });
    if (url === "/_antler/policy" && method === "GET") return json(200, { policy: this.options.policy.get() });
    if (url === "/_antler/policy" && method === "PUT") {
      const parsed = egressPolicySchema.safeParse((body as { policy?: unknown } | undefined)?.policy);
      if (!parsed.success) return json(400, { error: `invalid policy: ${parsed.error.issues[0]?.message ?? "unknown"}` });
      this.options.policy.set(parsed.data);
      return json(200, { policy: parsed.data });
    }
    if (url === "/_antler/policy/approve" && method === "POST") {
      const { host, port } = (body ?? {}) as { host?: unknown; port?: unknown };
      if (typeof host !== "string" || host === "" || typeof port !== "number") return json(400, { error: "needs { host, port }" });
      const next = withApproval(this.options.policy.get(), host, port);
      this.options.policy.set(next);
      this.options.log?.("egress_approved", { host, port });
      return json(200, { policy: next });
    }
    return json(404, { error: `no control route ${method} ${url}` });
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024) throw new Error("control body too large");
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
