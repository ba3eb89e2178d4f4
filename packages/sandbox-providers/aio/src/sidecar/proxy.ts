import { Resolver } from "node:dns/promises";
import { createServer as createTcpServer, isIP, connect as netConnect, type Server, type Socket } from "node:net";
import { classifyAddress } from "@antler/tools-web/ssrf";
import type { DenialLog } from "./denials.js";
import { ChunkedBodyEnd, forwardedHead, headEnd, MAX_HEAD_BYTES, parseRequestHead, type RequestHead } from "./http-head.js";
import { decideEgress, type EgressPolicy, inAllowedPrivateRange, normalizeHost } from "./policy.js";
import { readClientHelloSni } from "./sni.js";

/** Every A and AAAA answer of a name; throws when the name has none. */
export type ResolveAddresses = (host: string) => Promise<string[]>;

/** Resolves with `dns.promises.Resolver` (A, then AAAA), against `servers` when given (e.g. `127.0.0.1:5353`). */
export function createDnsResolver(servers?: readonly string[]): ResolveAddresses {
  const resolver = new Resolver({ timeout: 3000, tries: 1 });
  if (servers && servers.length > 0) resolver.setServers([...servers]);
  return async (host) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const answers = [...(v4.status === "fulfilled" ? v4.value : []), ...(v6.status === "fulfilled" ? v6.value : [])];
    if (answers.length === 0) {
      const reason = v4.status === "rejected" ? v4.reason : v6.status === "rejected" ? v6.reason : undefined;
      throw reason ?? new Error(`no addresses for ${host}`);
    }
    return answers;
  };
}

export interface EgressProxyOptions {
  policy: () => EgressPolicy;
  denials: DenialLog;
  resolve: ResolveAddresses;
  /** Per address tried; default 3000 ms. */
  connectTimeoutMs?: number;
  /** A client that sends no complete head within this long is dropped; default 10 000 ms. */
  headTimeoutMs?: number;
  log?: (event: string, fields: Record<string, unknown>) => void;
}

type Refusal = { status: 400 | 403 | 502; reason: string };

/**
 * The egress proxy: HTTP forward proxy (absolute-form requests) and CONNECT tunnels. Order of checks for each
 * request: strict head parse (400), policy on the name and port (403, before any DNS), resolution, every answer
 * checked against the public-address rules of `validatePublicHttpUrl` (non-public answers are skipped), then each
 * remaining answer tried in turn until one connects (502 when none does). One request per client connection:
 * bytes after the request's body are never forwarded, so a smuggled second request goes nowhere.
 */
export class EgressProxy {
  readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly options: EgressProxyOptions) {
    this.server = createTcpServer((socket) => this.accept(socket));
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
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.sockets.add(client);
    client.on("close", () => this.sockets.delete(client));
    client.on("error", () => client.destroy());
    let buffered = Buffer.alloc(0);
    const timer = setTimeout(() => client.destroy(), this.options.headTimeoutMs ?? 10_000);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = headEnd(buffered);
      if (end < 0 && buffered.length <= MAX_HEAD_BYTES) return;
      client.off("data", onData);
      client.pause();
      clearTimeout(timer);
      if (end < 0 || end > MAX_HEAD_BYTES) {
        this.refuse(client, { status: 400, reason: `the header block exceeds ${MAX_HEAD_BYTES} bytes` });
        return;
      }
      const parsed = parseRequestHead(buffered.subarray(0, end));
      if (!parsed.ok) {
        this.refuse(client, { status: 400, reason: parsed.reason });
        return;
      }
      this.handle(client, parsed.head, buffered.subarray(end)).catch((err: unknown) => {
        this.options.log?.("proxy_error", { err: String(err) });
        client.destroy();
      });
    };
    client.on("data", onData);
  }

  private async handle(client: Socket, head: RequestHead, rest: Buffer): Promise<void> {
    const upstream = await this.open(head);
    if ("status" in upstream) {
      this.refuse(client, upstream);
      return;
    }
    const socket = upstream.socket;
    client.on("close", () => socket.destroy());
    socket.on("error", () => client.destroy());
    socket.on("close", () => client.end());
    if (head.method === "CONNECT") {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      await this.tunnel(client, socket, head, rest);
      return;
    }
    socket.write(forwardedHead(head));
    socket.pipe(client);
    this.forwardBody(client, socket, head, rest);
  }

  /** Policy, resolution, address checks and connection; a refusal is recorded as a denial when it is one. */
  private async open(head: RequestHead): Promise<{ socket: Socket } | Refusal> {
    const policy = this.options.policy();
    const host = normalizeHost(head.host);
    const verdict = decideEgress(policy, host, head.port);
    if (!verdict.allowed) return this.deny(head, "policy", verdict.reason);
    let answers: string[];
    if (isIP(host)) {
      answers = [host];
    } else {
      try {
        answers = await this.options.resolve(host);
      } catch (err) {
        return { status: 502, reason: `${host} could not be resolved (${(err as { code?: string }).code ?? String(err)})` };
      }
    }
    const usable: string[] = [];
    const skipped: string[] = [];
    for (const address of answers) {
      const verdict = classifyAddress(address);
      if (verdict === undefined) {
        skipped.push(`${address}: not an IP address`);
      } else if (verdict.class === "public" || (verdict.class !== "metadata" && inAllowedPrivateRange(policy, address))) {
        usable.push(address);
      } else {
        skipped.push(`${address}: ${verdict.description}`);
      }
    }
    if (usable.length === 0) {
      return this.deny(head, "address", `${host} has no reachable public address (${skipped.join("; ")})`);
    }
    const failures: string[] = [];
    for (const address of usable) {
      try {
        return { socket: await this.connect(address, head.port) };
      } catch (err) {
        failures.push(`${address}: ${(err as { code?: string }).code ?? String(err)}`);
      }
    }
    return { status: 502, reason: `could not connect to ${host}:${head.port} at any of its addresses (${failures.join("; ")})` };
  }

  private connect(address: string, port: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = netConnect({ host: address, port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(Object.assign(new Error("connect timeout"), { code: "ETIMEDOUT" }));
      }, this.options.connectTimeoutMs ?? 3000);
      socket.once("connect", () => {
        clearTimeout(timer);
        socket.off("error", reject);
        resolve(socket);
      });
      socket.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  private deny(head: RequestHead, kind: "policy" | "address" | "sni", reason: string): Refusal {
    const denial = this.options.denials.record({ host: normalizeHost(head.host), port: head.port, method: head.method, kind, reason });
    this.options.log?.("egress_denied", { ...denial });
    return { status: 403, reason: `egress denied: ${reason}` };
  }

  private forwardBody(client: Socket, upstream: Socket, head: RequestHead, rest: Buffer): void {
    const framing = head.framing;
    if (framing.kind === "none") return;
    let remaining = framing.kind === "length" ? framing.length : Number.POSITIVE_INFINITY;
    const chunked = framing.kind === "chunked" ? new ChunkedBodyEnd() : undefined;
    const take = (chunk: Buffer): boolean => {
      let n: number;
      if (chunked) {
        try {
          n = chunked.consume(chunk);
        } catch (err) {
          // The head already went upstream; a broken body ends both sides rather than forwarding ambiguity.
          this.options.log?.("bad_chunked_body", { err: String(err) });
          upstream.destroy();
          client.destroy();
          return true;
        }
      } else {
        n = Math.min(remaining, chunk.length);
        remaining -= n;
      }
      if (n > 0) upstream.write(chunk.subarray(0, n));
      return chunked ? chunked.done : remaining === 0;
    };
    if (rest.length > 0 && take(rest)) return;
    const onData = (chunk: Buffer) => {
      if (take(chunk)) {
        client.off("data", onData);
        client.pause();
      }
    };
    client.on("data", onData);
    client.resume();
  }

  /** Pipes a CONNECT tunnel after checking the TLS server name of its first bytes, when they are a ClientHello. */
  private async tunnel(client: Socket, upstream: Socket, head: RequestHead, rest: Buffer): Promise<void> {
    let first = rest;
    const start = () => {
      if (first.length > 0) upstream.write(first);
      client.pipe(upstream);
      client.resume();
    };
    const inspect = (): boolean => {
      const sni = readClientHelloSni(first);
      if (sni.state === "need-more" && first.length < 16 * 1024 + 5) return false;
      if (sni.state === "done" && sni.name !== undefined && sni.name !== head.host) {
        const verdict = decideEgress(this.options.policy(), sni.name, head.port);
        if (!verdict.allowed) {
          this.options.denials.record({ host: sni.name, port: head.port, method: "CONNECT", kind: "sni", reason: verdict.reason });
          this.options.log?.("egress_denied", { host: sni.name, kind: "sni" });
          upstream.destroy();
          client.destroy();
          return true;
        }
      }
      start();
      return true;
    };
    // Server-first protocols work: the upstream's bytes flow at once; only the client's first flight is held.
    upstream.pipe(client);
    if (first.length > 0 && inspect()) return;
    const onData = (chunk: Buffer) => {
      first = Buffer.concat([first, chunk]);
      client.pause();
      if (inspect()) client.off("data", onData);
      else client.resume();
    };
    client.on("data", onData);
    client.resume();
  }

  private refuse(client: Socket, refusal: Refusal): void {
    const text = refusal.status === 400 ? "Bad Request" : refusal.status === 403 ? "Forbidden" : "Bad Gateway";
    const body = `${refusal.reason}\n`;
    client.end(
      `HTTP/1.1 ${refusal.status} ${text}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Antler-Egress: ${refusal.status === 403 ? "denied" : "refused"}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
}
