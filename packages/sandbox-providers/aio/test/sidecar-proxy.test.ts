import { createServer, type IncomingMessage, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RELAY_TOKEN_HEADER, type RunningSidecar, startSidecar } from "../src/sidecar/index.js";
import { CountingDnsStub } from "./dns-stub.js";

const TOKEN = "relay-token-0123456789abcdef";

interface Seen {
  method: string;
  url: string;
  host: string | undefined;
  body: string;
  headers: IncomingMessage["headers"];
}

/** An HTTP server playing a public site, recording every request it gets. */
async function site(host: string, port: number, name: string): Promise<{ server: Server; seen: Seen[]; port: number }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        host: req.headers.host,
        body: Buffer.concat(chunks).toString(),
        headers: req.headers,
      });
      res.end(`${name}:${req.method} ${req.url}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return { server, seen, port: typeof address === "object" && address ? address.port : port };
}

/** Sends raw bytes to a port and collects everything until the peer closes (or 3 s). */
function raw(port: number, bytes: string | Buffer, then?: (socket: Socket, got: () => string) => void): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let out = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(out);
    }, 3000);
    socket.on("data", (c: Buffer) => {
      out += c.toString("latin1");
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(out);
    });
    socket.on("error", () => undefined);
    socket.write(bytes);
    then?.(socket, () => out);
  });
}

const statusOf = (response: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);

describe("sidecar egress proxy and API relay on loopback", () => {
  let dns: CountingDnsStub;
  let sidecar: RunningSidecar;
  let publicSite: Awaited<ReturnType<typeof site>>;
  let wrongSite: Awaited<ReturnType<typeof site>>;
  let aio: Awaited<ReturnType<typeof site>>;
  let P: number;

  beforeAll(async () => {
    // 127.0.0.2-3 play public addresses (the policy's allow_private_cidrs); 127.0.0.1 stays a private answer.
    publicSite = await site("127.0.0.2", 0, "public");
    P = publicSite.port;
    // Same port on 127.0.0.1: a proxy that connected to a skipped private answer would get this site's body.
    wrongSite = await site("127.0.0.1", P, "WRONG");
    aio = await site("127.0.0.1", 0, "aio");
    dns = await CountingDnsStub.start({
      "allowed.test": ["127.0.0.2"],
      "mixed.test": ["127.0.0.1", "10.9.9.9", "127.0.0.2"],
      "multi.test": ["127.0.0.3", "127.0.0.2"],
      "private.test": ["10.0.0.5", "192.168.1.1", "169.254.169.254"],
      "evil.test": ["127.0.0.2"],
      "other.example": ["127.0.0.2"],
    });
    sidecar = await startSidecar({
      token: TOKEN,
      upstream: `http://127.0.0.1:${aio.port}`,
      host: "127.0.0.1",
      proxyPort: 0,
      relayPort: 0,
      dnsServers: [dns.server],
      connectTimeoutMs: 1000,
      policy: {
        label: "research",
        allow: ["*.test", "169.254.169.254", "127.0.0.1"],
        deny: ["evil.test"],
        ports: [P],
        allow_private_cidrs: ["127.0.0.2/31"],
      },
    });
  });

  afterAll(async () => {
    await sidecar?.close();
    await dns?.close();
    for (const s of [publicSite, wrongSite, aio]) s?.server.closeAllConnections();
    await Promise.all([publicSite, wrongSite, aio].map((s) => new Promise((r) => s?.server.close(r))));
  });

  it("answers a table of 44 requests as specified: allowed, denied before DNS, private answers skipped, all answers tried, malformed and smuggled heads refused, CONNECT, and the relay with and without token", async () => {
    const proxy = sidecar.proxyPort;
    const relay = sidecar.relayPort;
    const get = (host: string, extra = "") => `GET http://${host}/x HTTP/1.1\r\nHost: ${host}\r\n${extra}\r\n`;
    const a = `allowed.test:${P}`;
    type Row = { name: string; expected: string; actual: string };
    const rows: Row[] = [];
    const seenBefore = () => publicSite.seen.length;

    /** A row: the outcome string is status plus what else the check observed. */
    async function row(name: string, expected: string, run: () => Promise<string>) {
      rows.push({ name, expected, actual: await run().catch((e: unknown) => `threw ${String(e)}`) });
    }
    const noDns = async (names: string[], run: () => Promise<string>) => {
      const before = names.map((n) => dns.count(n));
      const out = await run();
      const looked = names.some((n, i) => dns.count(n) !== before[i]);
      return `${out}${looked ? " +dns" : " no-dns"}`;
    };
    const status = async (bytes: string | Buffer, port = proxy) => String(statusOf(await raw(port, bytes)));
    const body = async (bytes: string) => {
      const r = await raw(proxy, bytes);
      return `${statusOf(r)} ${r.slice(r.indexOf("\r\n\r\n") + 4)}`;
    };

    // Allowed and denied by policy
    await row("GET an allowed name", `200 public:GET /x`, () => body(get(a)));
    await row("GET a denied name is refused before DNS", "403 no-dns", () => noDns(["evil.test"], () => status(get(`evil.test:${P}`))));
    await row("GET a name outside the allow list before DNS", "403 no-dns", () =>
      noDns(["other.example"], () => status(get(`other.example:${P}`))),
    );
    await row("GET an allowed name on a port not allowed, before DNS", "403 no-dns", () =>
      noDns(["allowed.test"], () => status(get("allowed.test:9"))),
    );
    await row("GET an allowed name with a trailing dot is the same name", `200`, () => status(get(`allowed.test.:${P}`)));
    await row("GET a denied name in upper case is still denied", "403 no-dns", () =>
      noDns(["evil.test"], () => status(get(`EVIL.test:${P}`))),
    );
    // Answers
    await row("GET a name whose answers are all non-public", "403", () => status(get(`private.test:${P}`)));
    await row("GET a name with private answers first: they are skipped", `200 public:GET /x`, () => body(get(`mixed.test:${P}`)));
    await row("GET a name whose first answer refuses: the next is tried", `200 public:GET /x`, () => body(get(`multi.test:${P}`)));
    await row("GET a metadata literal the policy names is still refused", "403", () => status(get(`169.254.169.254:${P}`)));
    await row("GET a loopback literal the policy names is refused", "403", () => status(get(`127.0.0.1:${P}`)));
    await row("GET a name that does not resolve", "502", () => status(get(`nx.test:${P}`)));
    // Bodies
    await row("POST with Content-Length forwards exactly the body", "200 hello", async () => {
      const n = seenBefore();
      const s = await status(`POST http://${a}/p HTTP/1.1\r\nHost: ${a}\r\nContent-Length: 5\r\n\r\nhello`);
      return `${s} ${publicSite.seen[n]?.body}`;
    });
    await row("POST chunked forwards the decoded body", "200 hello world", async () => {
      const n = seenBefore();
      const s = await status(
        `POST http://${a}/p HTTP/1.1\r\nHost: ${a}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n`,
      );
      return `${s} ${publicSite.seen[n]?.body}`;
    });
    // Malformed heads and smuggling attempts: 400, never forwarded
    const bad = async (head: string) => {
      const n = seenBefore();
      const s = await status(head);
      return `${s}${publicSite.seen.length === n ? " not-forwarded" : " FORWARDED"}`;
    };
    const B = "400 not-forwarded";
    await row("Content-Length with Transfer-Encoding", B, () =>
      bad(`POST http://${a}/ HTTP/1.1\r\nHost: ${a}\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`),
    );
    await row("two different Content-Length headers", B, () =>
      bad(`POST http://${a}/ HTTP/1.1\r\nHost: ${a}\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde`),
    );
    await row("a Content-Length list that disagrees", B, () =>
      bad(`POST http://${a}/ HTTP/1.1\r\nHost: ${a}\r\nContent-Length: 4, 5\r\n\r\nabcde`),
    );
    await row("a signed Content-Length", B, () => bad(`POST http://${a}/ HTTP/1.1\r\nHost: ${a}\r\nContent-Length: +4\r\n\r\nabcd`));
    await row("Transfer-Encoding gzip, chunked", B, () =>
      bad(`POST http://${a}/ HTTP/1.1\r\nHost: ${a}\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n`),
    );
    await row("Transfer-Encoding twice", B, () =>
      bad(`POST http://${a}/ HTTP/1.1\r\nHost: ${a}\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`),
    );
    await row("an obs-folded header", B, () => bad(`GET http://${a}/ HTTP/1.1\r\nHost: ${a}\r\nX-A: one\r\n two\r\n\r\n`));
    await row("bare LF line endings", B, () => bad(`GET http://${a}/ HTTP/1.1\nHost: ${a}\n\n\r\n\r\n`));
    await row("whitespace before the colon", B, () => bad(`GET http://${a}/ HTTP/1.1\r\nHost : ${a}\r\n\r\n`));
    await row("a control character in a value", B, () => bad(`GET http://${a}/ HTTP/1.1\r\nHost: ${a}\r\nX-A: a\x01b\r\n\r\n`));
    await row("no Host in HTTP/1.1", B, () => bad(`GET http://${a}/ HTTP/1.1\r\nAccept: */*\r\n\r\n`));
    await row("two Host headers", B, () => bad(`GET http://${a}/ HTTP/1.1\r\nHost: ${a}\r\nHost: ${a}\r\n\r\n`));
    await row("Host disagreeing with the absolute-form target, before DNS", "400 no-dns", () =>
      noDns(["allowed.test", "other.example"], () => status(`GET http://${a}/ HTTP/1.1\r\nHost: other.example:${P}\r\n\r\n`)),
    );
    await row("a Host with userinfo", B, () => bad(`GET http://${a}/ HTTP/1.1\r\nHost: user@${a}\r\n\r\n`));
    await row("an origin-form target", B, () => bad(`GET /x HTTP/1.1\r\nHost: ${a}\r\n\r\n`));
    await row("an https:// absolute target", B, () => bad(`GET https://${a}/ HTTP/1.1\r\nHost: ${a}\r\n\r\n`));
    await row("a malformed request line", B, () => bad(`GET  http://${a}/ HTTP/1.1\r\nHost: ${a}\r\n\r\n`));
    await row("a header block over 16 KiB", B, () =>
      bad(`GET http://${a}/ HTTP/1.1\r\nHost: ${a}\r\nX-Big: ${"a".repeat(17_000)}\r\n\r\n`),
    );
    await row("a second request pipelined after the body is never forwarded", "200 1 no-dns", async () => {
      const n = seenBefore();
      const out = await noDns(["evil.test"], () =>
        status(
          `POST http://${a}/p HTTP/1.1\r\nHost: ${a}\r\nContent-Length: 2\r\n\r\nok` +
            `GET http://evil.test:${P}/ HTTP/1.1\r\nHost: evil.test:${P}\r\n\r\n`,
        ),
      );
      return out.replace(" ", ` ${publicSite.seen.length - n} `);
    });
    // CONNECT
    await row("CONNECT an allowed authority tunnels bytes", "200 public:GET /t", async () => {
      const response = await raw(proxy, `CONNECT ${a} HTTP/1.1\r\nHost: ${a}\r\n\r\n`, (socket, got) => {
        const wait = setInterval(() => {
          if (got().includes("\r\n\r\n")) {
            clearInterval(wait);
            socket.write(`GET /t HTTP/1.1\r\nHost: ${a}\r\nConnection: close\r\n\r\n`);
          }
        }, 5);
      });
      return `${statusOf(response)} ${response.slice(response.lastIndexOf("\r\n\r\n") + 4)}`;
    });
    await row("CONNECT a denied authority is refused before DNS", "403 no-dns", () =>
      noDns(["evil.test"], () => status(`CONNECT evil.test:${P} HTTP/1.1\r\nHost: evil.test:${P}\r\n\r\n`)),
    );
    await row("CONNECT to a port not allowed", "403", () => status(`CONNECT allowed.test:22 HTTP/1.1\r\nHost: allowed.test:22\r\n\r\n`));
    await row("CONNECT whose Host disagrees with the authority", "400", () =>
      status(`CONNECT ${a} HTTP/1.1\r\nHost: other.example:${P}\r\n\r\n`),
    );
    await row("CONNECT with a body", "400", () => status(`CONNECT ${a} HTTP/1.1\r\nHost: ${a}\r\nContent-Length: 3\r\n\r\nabc`));
    await row("CONNECT to an allowed authority with a denied TLS server name is cut", "closed sni-denial", () =>
      connectWithSni(proxy, a, "evil.test").then(
        (r) => `${r}${sidecar.denials.list().some((d) => d.kind === "sni" && d.host === "evil.test") ? " sni-denial" : ""}`,
      ),
    );
    await row("CONNECT with an allowed TLS server name passes the hello on", "forwarded", () => connectWithSni(proxy, a, "allowed.test"));
    // API relay
    const relayGet = async (path: string, headers: Record<string, string>) => {
      const n = aio.seen.length;
      const res = await fetch(`http://127.0.0.1:${relay}${path}`, { headers });
      const text = await res.text();
      return `${res.status}${aio.seen.length > n ? " reached" : " not-reached"}${text.startsWith("aio:") ? "" : ""}`;
    };
    await row("relay with the token reaches the AIO API", "200 reached", () => relayGet("/v1/sandbox", { [RELAY_TOKEN_HEADER]: TOKEN }));
    await row("relay without a token is refused", "401 not-reached", () => relayGet("/v1/sandbox", {}));
    await row("relay with a wrong token is refused", "401 not-reached", () =>
      relayGet("/v1/sandbox", { [RELAY_TOKEN_HEADER]: `${TOKEN}x` }),
    );
    await row("relay token in Authorization instead is refused", "401 not-reached", () =>
      relayGet("/v1/sandbox", { authorization: `Bearer ${TOKEN}` }),
    );
    await row("relay control API without a token is refused", "401", async () => {
      const res = await fetch(`http://127.0.0.1:${relay}/_antler/denials/claim`, { method: "POST" });
      return String(res.status);
    });

    console.table(rows);
    expect(rows.length).toBeGreaterThanOrEqual(30);
    expect(rows.filter((r) => r.actual !== r.expected)).toEqual([]);
    // The relay stripped its token: the AIO API never saw it.
    expect(aio.seen.every((s) => s.headers[RELAY_TOKEN_HEADER] === undefined)).toBe(true);
    // Nothing reached the site on the skipped private answer.
    expect(wrongSite.seen).toEqual([]);
  });

  it("records each refusal as a denial and hands out the oldest unsurfaced one first, each once", async () => {
    const post = async (path: string) =>
      (await (
        await fetch(`http://127.0.0.1:${sidecar.relayPort}${path}`, { method: "POST", headers: { [RELAY_TOKEN_HEADER]: TOKEN } })
      ).json()) as {
        denial?: { host: string; id: number } | null;
        denials?: { host: string }[];
      };
    await post("/_antler/denials/drain");
    await raw(sidecar.proxyPort, `GET http://evil.test:${P}/ HTTP/1.1\r\nHost: evil.test:${P}\r\n\r\n`);
    await raw(sidecar.proxyPort, `GET http://other.example:${P}/ HTTP/1.1\r\nHost: other.example:${P}\r\n\r\n`);
    const first = await post("/_antler/denials/claim");
    const second = await post("/_antler/denials/claim");
    const third = await post("/_antler/denials/claim");
    expect(first.denial?.host).toBe("evil.test");
    expect(second.denial?.host).toBe("other.example");
    expect(third.denial).toBeNull();
  });

  it("an approval through the relay updates the policy, so the same request then passes", async () => {
    const before = statusOf(await raw(sidecar.proxyPort, `GET http://other.example:${P}/ HTTP/1.1\r\nHost: other.example:${P}\r\n\r\n`));
    const res = await fetch(`http://127.0.0.1:${sidecar.relayPort}/_antler/policy/approve`, {
      method: "POST",
      headers: { [RELAY_TOKEN_HEADER]: TOKEN, "content-type": "application/json" },
      body: JSON.stringify({ host: "other.example", port: P }),
    });
    expect(res.status).toBe(200);
    const after = statusOf(await raw(sidecar.proxyPort, `GET http://other.example:${P}/ HTTP/1.1\r\nHost: other.example:${P}\r\n\r\n`));
    expect([before, after]).toEqual([403, 200]);
  });
});

/** Opens a CONNECT tunnel and starts TLS with `servername`; reports whether the proxy cut it or passed the hello on. */
function connectWithSni(proxyPort: number, authority: string, servername: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port: proxyPort });
    let head = "";
    socket.on("error", () => undefined);
    const onHead = (c: Buffer) => {
      head += c.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      socket.off("data", onHead);
      const tls = tlsConnect({ socket, servername, rejectUnauthorized: false });
      // The upstream is a plain HTTP server: a forwarded ClientHello gets a clear-text 400 back, which TLS reports as
      // a record it cannot parse; a tunnel the proxy cut ends without any answer.
      const done = (err?: Error & { code?: string }) =>
        resolve(err && /SSL|WRONG_VERSION|PACKET_LENGTH|wrong version/i.test(`${err.code} ${err.message}`) ? "forwarded" : "closed");
      tls.on("error", done);
      tls.on("close", () => done());
    };
    socket.on("data", onHead);
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  });
}
