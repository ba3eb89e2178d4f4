import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  classifyAddress,
  createGuardedFetch,
  createPinnedDispatcher,
  type LookupFunction,
  parseIPv4,
  SsrfBlockedError,
  validatePublicHttpUrl,
} from "../src/index.js";
import { type LoopbackReply, type LoopbackServer, startLoopbackServer, stubLookup } from "../src/testing/index.js";

// The test network: public-looking names resolve through this stub, never through real DNS.
const lookup = stubLookup({
  "internal.corp.example": "10.1.2.3",
  "mixed.example": ["93.184.215.14", "127.0.0.1"],
  "v6private.example": "fd12:3456::1",
  "mapped.example": "::ffff:10.0.0.1",
  "metadata-alias.example": "169.254.169.254",
  "cgnat.example": "100.100.1.1",
  "nxdomain.example": [],
  "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
});

const REFUSED: Array<[url: string, reason: RegExp]> = [
  ["http://127.0.0.1/", /127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\)/],
  ["http://2130706433/", /127\.0\.0\.1 is a loopback address/], // decimal
  ["http://0177.0.0.1/", /127\.0\.0\.1 is a loopback address/], // octal
  ["http://017700000001/", /127\.0\.0\.1 is a loopback address/], // octal, one part
  ["http://0x7f.0.0.1/", /127\.0\.0\.1 is a loopback address/], // hex
  ["http://0x7f000001/", /127\.0\.0\.1 is a loopback address/], // hex, one part
  ["http://127.1/", /127\.0\.0\.1 is a loopback address/], // short form
  ["http://[::1]/", /the loopback address \(::1\)/],
  ["http://[::ffff:127.0.0.1]/", /IPv4-mapped IPv6 address .* wrapping 127\.0\.0\.1/],
  ["http://[::ffff:7f00:1]/", /IPv4-mapped IPv6 address/],
  ["http://[::ffff:169.254.169.254]/", /IPv4-mapped IPv6 address .* wrapping 169\.254\.169\.254/],
  ["http://169.254.169.254/latest/meta-data/", /cloud instance-metadata endpoint.*always blocked/],
  ["http://[fd00:ec2::254]/", /AWS instance-metadata endpoint \(IPv6\).*always blocked/],
  ["http://metadata.google.internal/computeMetadata/v1/", /instance-metadata service/],
  ["http://10.0.0.5/", /a private address \(10\.0\.0\.0\/8\)/],
  ["http://172.16.3.4/", /a private address \(172\.16\.0\.0\/12\)/],
  ["http://192.168.1.1/admin", /a private address \(192\.168\.0\.0\/16\)/],
  ["http://100.64.0.1/", /carrier-grade NAT .* \(100\.64\.0\.0\/10\)/],
  ["http://169.254.10.20/", /link-local address \(169\.254\.0\.0\/16\)/],
  ["http://[fe80::1]/", /link-local address \(fe80::\/10\)/],
  ["http://[fc00::1]/", /unique-local address \(fc00::\/7\)/],
  ["http://224.0.0.1/", /multicast address \(224\.0\.0\.0\/4\)/],
  ["http://[ff02::1]/", /multicast address \(ff00::\/8\)/],
  ["http://0.0.0.0/", /unspecified/],
  ["http://0/", /unspecified/],
  ["http://[::]/", /unspecified address \(::\)/],
  ["http://255.255.255.255/", /broadcast/],
  ["http://198.18.0.1/", /benchmarking/],
  ["http://[64:ff9b::7f00:1]/", /NAT64 address wrapping 127\.0\.0\.1/],
  ["http://[2002:7f00:1::]/", /6to4 address wrapping 127\.0\.0\.1/],
  ["http://localhost:8080/", /localhost is a loopback name/],
  ["http://app.localhost/", /app\.localhost is a loopback name/],
  ["ftp://example.com/file.txt", /scheme "ftp" is not allowed; only http and https/],
  ["file:///etc/passwd", /scheme "file" is not allowed/],
  ["gopher://example.com:70/", /scheme "gopher" is not allowed/],
  ["javascript:alert(1)", /scheme "javascript" is not allowed/],
  ["not a url", /is not a valid absolute URL/],
  ["http://internal.corp.example/", /internal\.corp\.example resolves to 10\.1\.2\.3, a private address/],
  ["http://mixed.example/", /mixed\.example resolves to 127\.0\.0\.1, a loopback address/],
  ["http://v6private.example/", /resolves to fd12:3456::1, a unique-local address/],
  ["http://mapped.example/", /resolves to ::ffff:10\.0\.0\.1, an IPv4-mapped IPv6 address/],
  ["http://metadata-alias.example/", /resolves to 169\.254\.169\.254, the cloud instance-metadata endpoint/],
  ["http://cgnat.example/", /resolves to 100\.100\.1\.1, a carrier-grade NAT/],
  ["http://nxdomain.example/", /could not be resolved \(ENOTFOUND\)/],
];

const ALLOWED = [
  "https://example.com/",
  "https://public.example/search?q=antlers",
  "http://93.184.215.14/",
  "http://1.1.1.1:8080/path",
  "https://8.8.8.8/",
  "http://[2606:4700:4700::1111]/",
  "http://172.32.0.1/", // just outside 172.16.0.0/12
  "http://100.128.0.1/", // just outside 100.64.0.0/10
  "http://169.255.0.1/",
];

describe("validatePublicHttpUrl: the SSRF table", () => {
  it("has at least 25 refused URLs", () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(25);
  });

  it.each(REFUSED)("refuses %s with a clear reason", async (url, reason) => {
    const check = await validatePublicHttpUrl(url, { lookup });
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toMatch(reason);
  });

  it.each(ALLOWED)("allows the public URL %s", async (url) => {
    const check = await validatePublicHttpUrl(url, { lookup });
    expect(check).toMatchObject({ ok: true });
    if (check.ok) expect(check.addresses.length).toBeGreaterThan(0);
  });

  it("returns every address a public name resolved to", async () => {
    const check = await validatePublicHttpUrl("https://public.example/", { lookup });
    expect(check).toMatchObject({ ok: true, addresses: ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"] });
  });

  it("allow_private_addresses lets loopback, private and DNS-to-private targets through", async () => {
    for (const url of [
      "http://127.0.0.1:3000/",
      "http://2130706433/",
      "http://[::1]/",
      "http://internal.corp.example/",
      "http://localhost/",
    ]) {
      expect(await validatePublicHttpUrl(url, { lookup, allowPrivateAddresses: true }), url).toMatchObject({ ok: true });
    }
  });

  it("keeps cloud-metadata endpoints blocked even with allow_private_addresses", async () => {
    for (const url of [
      "http://169.254.169.254/",
      "http://[fd00:ec2::254]/",
      "http://metadata-alias.example/",
      "http://metadata.google.internal/",
    ]) {
      const check = await validatePublicHttpUrl(url, { lookup, allowPrivateAddresses: true });
      expect(check.ok, url).toBe(false);
      if (!check.ok) expect(check.reason).toMatch(/always blocked/);
    }
  });

  it("still refuses non-http schemes with allow_private_addresses", async () => {
    expect(await validatePublicHttpUrl("file:///etc/passwd", { allowPrivateAddresses: true })).toMatchObject({ ok: false });
  });
});

describe("address parsing", () => {
  it("parses IPv4 in decimal, octal, hex and short forms", () => {
    expect(parseIPv4("2130706433")).toBe(0x7f000001);
    expect(parseIPv4("0177.0.0.01")).toBe(0x7f000001);
    expect(parseIPv4("0x7f.0x0.0.1")).toBe(0x7f000001);
    expect(parseIPv4("127.1")).toBe(0x7f000001);
    expect(parseIPv4("10.258")).toBe(0x0a000102);
    expect(parseIPv4("256.1.1.1")).toBeUndefined();
    expect(parseIPv4("example.com")).toBeUndefined();
    expect(parseIPv4("1.2.3.4.5")).toBeUndefined();
  });

  it("classifies addresses and leaves DNS names unclassified", () => {
    expect(classifyAddress("8.8.8.8")?.class).toBe("public");
    expect(classifyAddress("::ffff:8.8.8.8")?.class).toBe("ipv4-mapped");
    expect(classifyAddress("[::1]")?.class).toBe("loopback");
    expect(classifyAddress("fe80::1%eth0")?.class).toBe("link-local");
    expect(classifyAddress("example.com")).toBeUndefined();
  });
});

describe("createGuardedFetch: redirects re-checked on every hop", () => {
  let server: LoopbackServer;
  // The test network: these public-looking names are served by the loopback server (like a hosts file),
  // while the guard sees what the stub resolver says about them.
  const network = stubLookup({ "internal.example": "10.0.0.7" });
  const route: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.hostname.endsWith(".example") || url.hostname === "example.com") {
      return fetch(`${server.url}${url.pathname}${url.search}`, {
        ...init,
        headers: { ...Object.fromEntries(new Headers(init?.headers)), "x-original-host": url.host },
      });
    }
    return fetch(input, init);
  };

  beforeAll(async () => {
    server = await startLoopbackServer((req): LoopbackReply => {
      switch (req.path) {
        case "/to-loopback":
          return { status: 302, headers: { location: `${server.url}/secret` } };
        case "/to-decimal":
          return { status: 301, headers: { location: `http://2130706433:${server.port}/secret` } };
        case "/to-metadata":
          return { status: 307, headers: { location: "http://169.254.169.254/latest/meta-data/iam" } };
        case "/to-internal-name":
          return { status: 308, headers: { location: "http://internal.example/secret" } };
        case "/hop1":
          return { status: 302, headers: { location: "https://second.example/hop2" } };
        case "/hop2":
          return { status: 303, headers: { location: `http://[::ffff:127.0.0.1]:${server.port}/secret` } };
        case "/to-public":
          return { status: 302, headers: { location: "/final" } };
        case "/final":
          return { status: 200, body: "final page", headers: { "content-type": "text/plain" } };
        case "/loop":
          return { status: 302, headers: { location: "/loop" } };
        case "/slow":
          return { status: 200, body: "late", delayMs: 30_000 };
        case "/secret":
          return { status: 200, body: "internal secret" };
        default:
          return { status: 404, body: "not found" };
      }
    });
  });
  afterAll(() => server.close());

  const guarded = (extra: Parameters<typeof createGuardedFetch>[0] = {}) => createGuardedFetch({ lookup: network, fetch: route, ...extra });
  const secretHits = () => server.requests.filter((r) => r.path === "/secret").length;

  it.each([
    ["/to-loopback", /blocked redirect hop 1 to http:\/\/127\.0\.0\.1:\d+\/secret: host 127\.0\.0\.1 is a loopback address/],
    ["/to-decimal", /blocked redirect hop 1 to http:\/\/127\.0\.0\.1:\d+\/secret/],
    ["/to-metadata", /blocked redirect hop 1 to http:\/\/169\.254\.169\.254\/latest\/meta-data\/iam: .*metadata/],
    ["/to-internal-name", /blocked redirect hop 1 to http:\/\/internal\.example\/secret: host internal\.example resolves to 10\.0\.0\.7/],
    ["/hop1", /blocked redirect hop 2 to http:\/\/\[::ffff:7f00:1\]:\d+\/secret: .*IPv4-mapped/],
  ])("refuses the redirect %s to a private address, and never requests it", async (path, message) => {
    const before = secretHits();
    const err = await guarded()(`https://start.example${path}`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SsrfBlockedError);
    expect((err as Error).message).toMatch(message);
    expect(secretHits()).toBe(before);
  });

  it("follows redirects between public hosts and returns the final response", async () => {
    const response = await guarded()("https://start.example/to-public");
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("final page");
  });

  it("refuses the first URL before sending anything", async () => {
    const before = server.requests.length;
    await expect(guarded()(`${server.url}/secret`)).rejects.toThrow(
      /blocked http:\/\/127\.0\.0\.1:\d+\/secret: host 127\.0\.0\.1 is a loopback address/,
    );
    expect(server.requests.length).toBe(before);
  });

  it("stops after max_redirects", async () => {
    await expect(guarded({ maxRedirects: 3 })("https://start.example/loop")).rejects.toThrow(/more than 3 redirects/);
  });

  it("reaches loopback targets with allow_private_addresses, and sends X-Trace-Id", async () => {
    const response = await createGuardedFetch({ allowPrivateAddresses: true, traceId: "trace-guarded-1" })(`${server.url}/to-loopback`);
    expect(await response.text()).toBe("internal secret");
    const sent = server.requests.filter((r) => r.path === "/to-loopback" || r.path === "/secret").slice(-2);
    expect(sent.map((r) => r.headers["x-trace-id"])).toEqual(["trace-guarded-1", "trace-guarded-1"]);
  });

  it("aborts a slow answer at timeoutMs", async () => {
    const started = Date.now();
    const err = await createGuardedFetch({ allowPrivateAddresses: true, timeoutMs: 300 })(`${server.url}/slow`).catch((e: unknown) => e);
    expect((err as Error).name).toBe("TimeoutError");
    // Well short of the 30 s the answer is held back, with room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("drops credentials when a redirect leaves the origin", async () => {
    await guarded()("https://start.example/to-public", { headers: { authorization: "Bearer same-origin" } });
    const final = server.requests.filter((r) => r.path === "/final").at(-1);
    expect(final?.headers.authorization).toBe("Bearer same-origin");
    server.requests.length = 0;
    await guarded()("https://start.example/hop1", { headers: { authorization: "Bearer secret" } }).catch(() => undefined);
    const second = server.requests.find((r) => r.path === "/hop2");
    expect(second?.headers.authorization).toBeUndefined();
  });
});

describe("createPinnedDispatcher: DNS rebinding", () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startLoopbackServer(() => ({ status: 200, body: "internal secret" }));
  });
  afterAll(() => server.close());

  /** A resolver that answers a public address first, then loopback: the classic rebinding attack. */
  function rebinding(): LookupFunction {
    let calls = 0;
    return async () => [{ address: calls++ === 0 ? "93.184.215.14" : "127.0.0.1", family: 4 }];
  }

  it("refuses a name that passes the check but resolves to loopback when the connection is made", async () => {
    const lookup = rebinding();
    const dispatcher = createPinnedDispatcher({ lookup });
    try {
      const err = await createGuardedFetch({ lookup, dispatcher })(`http://rebind.test:${server.port}/secret`).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SsrfBlockedError);
      expect((err as Error).message).toMatch(
        /blocked the connection to http:\/\/rebind\.test:\d+\/secret: host rebind\.test resolves to 127\.0\.0\.1, a loopback address .* at connect time/,
      );
      expect(server.requests).toHaveLength(0);
    } finally {
      await dispatcher.close();
    }
  });

  it("connects to the address the pinned lookup approved", async () => {
    const lookup = stubLookup({ "intranet.test": "127.0.0.1" });
    const dispatcher = createPinnedDispatcher({ lookup, allowPrivateAddresses: true });
    try {
      const response = await createGuardedFetch({ lookup, dispatcher, allowPrivateAddresses: true })(
        `http://intranet.test:${server.port}/ok`,
      );
      expect(await response.text()).toBe("internal secret");
    } finally {
      await dispatcher.close();
    }
  });
});
