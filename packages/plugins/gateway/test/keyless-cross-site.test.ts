import { readdirSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { isAntlerError, threadPaths } from "@antler/kernel";
import { AntlerClient } from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import { type GatewayConfigInput, gatewayConfigSchema } from "../src/config.js";
import { startGateway } from "../src/server.js";
import { ALICE_KEY, startTestGateway, tempDir } from "./fixtures.js";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with node:http, which (unlike fetch) sends the Host, Origin and Sec-Fetch-* headers it is given. */
function send(url: string, init: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method ?? "GET", headers: init.headers }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (chunk: Buffer) => parts.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

const errorCode = (answer: Answer) => (JSON.parse(answer.body) as { error: { code: string; message: string } }).error.code;

/** A gateway in `auth.mode: none` on loopback, as `antler serve` runs it for local use. */
const keyless = (config: Partial<GatewayConfigInput> = {}) =>
  startTestGateway({ config: { auth: { mode: "none", user: "solo" }, cors: { allow_origins: [] }, ...config } });

const json = { "content-type": "application/json" };

describe("Host check (DNS rebinding)", () => {
  it("refuses a foreign Host with 421 ANTLER_ERR_GATEWAY_HOST_NOT_ALLOWED in mode none, reads and writes alike", async () => {
    const gw = await keyless();
    for (const [method, path] of [
      ["GET", "/api/threads"],
      ["POST", "/api/threads"],
      ["GET", "/health"],
    ] as const) {
      const body = method === "POST" ? "{}" : undefined;
      const answer = await send(`${gw.url}${path}`, { method, headers: { host: `evil.example:${gw.port}`, ...json }, body });
      expect(answer.status, `${method} ${path}`).toBe(421);
      expect(errorCode(answer)).toBe("ANTLER_ERR_GATEWAY_HOST_NOT_ALLOWED");
      expect(JSON.parse(answer.body).error.message).toContain("evil.example");
    }
    expect(await gw.client.listThreads({ userId: "solo" })).toEqual([]);
  });

  it("answers loopback names with any port (localhost, *.localhost, 127.0.0.1, [::1]) and the names in allowed_hosts", async () => {
    const gw = await keyless({ allowed_hosts: ["antler.lan", "*.example.org"] });
    for (const host of [
      "localhost:9",
      "LOCALHOST",
      "app.localhost:3000",
      "127.0.0.1:1",
      "[::1]:8001",
      "antler.lan:8001",
      "a.b.example.org",
    ]) {
      const answer = await send(`${gw.url}/api/threads`, { headers: { host } });
      expect(answer.status, host).toBe(200);
    }
    for (const host of ["example.org", "antler.lan.evil.example", "localhost.evil.example", "10.0.0.5"]) {
      expect((await send(`${gw.url}/api/threads`, { headers: { host } })).status, host).toBe(421);
    }
  });

  it("leaves the Host unchecked in api_keys mode unless allowed_hosts is set (a rebound page holds no key)", async () => {
    const open = await startTestGateway();
    const auth = { authorization: `Bearer ${ALICE_KEY}` };
    expect((await send(`${open.url}/api/threads`, { headers: { host: "evil.example", ...auth } })).status).toBe(200);
    const listed = await startTestGateway({ config: { allowed_hosts: ["antler.example.com"] } });
    expect((await send(`${listed.url}/api/threads`, { headers: { host: "antler.example.com", ...auth } })).status).toBe(200);
    expect((await send(`${listed.url}/api/threads`, { headers: { host: "localhost", ...auth } })).status).toBe(200);
    const refused = await send(`${listed.url}/api/threads`, { headers: { host: "evil.example", ...auth } });
    expect(refused.status).toBe(421);
    expect(errorCode(refused)).toBe("ANTLER_ERR_GATEWAY_HOST_NOT_ALLOWED");
  });

  it("refuses allowed_hosts entries with a scheme or port", () => {
    for (const bad of ["http://antler.lan", "antler.lan:8001", "*", "a b"]) {
      const parsed = gatewayConfigSchema.safeParse({ auth: { mode: "none" }, allowed_hosts: [bad] });
      expect(parsed.error?.issues[0]?.message, bad).toContain("without scheme or port");
    }
  });
});

describe("binding in mode none", () => {
  it("refuses 0.0.0.0 with ANTLER_ERR_CONFIG_INVALID naming auth.allow_none_on_network, and binds it once that is true", async () => {
    const client = await AntlerClient.create({ config: { storage: { backend: "memory" }, base_dir: tempDir() }, discover: false, env: {} });
    try {
      for (const options of [
        { config: { auth: { mode: "none" as const }, host: "0.0.0.0" } },
        { config: { auth: { mode: "none" as const } }, host: "0.0.0.0" },
      ]) {
        const error = await startGateway({ client, port: 0, ...options }).catch((e: unknown) => e);
        expect(isAntlerError(error, "ANTLER_ERR_CONFIG_INVALID")).toBe(true);
        expect((error as { where: string }).where).toBe("@antler/plugin-gateway config.auth.allow_none_on_network");
        expect((error as Error).message).toContain("0.0.0.0");
        expect((error as { hint: string }).hint).toContain("auth.allow_none_on_network: true");
      }
      const gateway = await startGateway({
        client,
        port: 0,
        host: "0.0.0.0",
        config: { auth: { mode: "none", allow_none_on_network: true } },
      });
      try {
        expect(gateway.host).toBe("0.0.0.0");
      } finally {
        await gateway.close();
      }
    } finally {
      await client.close();
    }
  });
});

describe("same-origin writes in mode none", () => {
  it("refuses a POST whose Origin is another page, even another loopback port, with 403 and creates nothing", async () => {
    const gw = await keyless();
    const other = `http://127.0.0.1:${gw.port + 1}`;
    for (const origin of [other, "http://evil.example", "null", `http://localhost:${gw.port + 1}`]) {
      const answer = await send(`${gw.url}/api/threads`, { method: "POST", headers: { origin, ...json }, body: "{}" });
      expect(answer.status, origin).toBe(403);
      expect(errorCode(answer)).toBe("ANTLER_ERR_GATEWAY_CROSS_SITE_REQUEST");
    }
    expect(await gw.client.listThreads({ userId: "solo" })).toEqual([]);
  });

  it("refuses a state-changing request marked Sec-Fetch-Site cross-site or same-site, whatever its method", async () => {
    const gw = await keyless();
    await gw.client.createThread({ threadId: "kept", userId: "solo" });
    for (const [method, path, site] of [
      ["POST", "/api/threads", "cross-site"],
      ["POST", "/api/threads", "same-site"],
      ["DELETE", "/api/threads/kept", "cross-site"],
      ["PUT", "/api/agents/spy", "same-site"],
    ] as const) {
      const body = method === "DELETE" ? undefined : "{}";
      const answer = await send(`${gw.url}${path}`, { method, headers: { "sec-fetch-site": site, ...json }, body });
      expect(answer.status, `${method} ${path} ${site}`).toBe(403);
    }
    expect((await gw.client.listThreads({ userId: "solo" })).map((t) => t.thread_id)).toEqual(["kept"]);
  });

  it("accepts the gateway's own origin, Sec-Fetch-Site same-origin or none, and clients that send neither (curl)", async () => {
    const gw = await keyless();
    const own = { origin: gw.url, "sec-fetch-site": "same-origin", ...json };
    expect((await send(`${gw.url}/api/threads`, { method: "POST", headers: own, body: "{}" })).status).toBe(201);
    expect(
      (await send(`${gw.url}/api/threads`, { method: "POST", headers: { "sec-fetch-site": "none", ...json }, body: "{}" })).status,
    ).toBe(201);
    expect((await send(`${gw.url}/api/threads`, { method: "POST", headers: json, body: "{}" })).status).toBe(201);
    // `curl -X POST` with nothing to send: no body, no Content-Type.
    expect((await send(`${gw.url}/api/threads`, { method: "POST" })).status).toBe(201);
  });

  it("accepts an origin listed in cors.allow_origins, and refuses `*` in mode none", async () => {
    const gw = await keyless({ cors: { allow_origins: ["http://app.example:3000"] } });
    const answer = await send(`${gw.url}/api/threads`, {
      method: "POST",
      headers: { origin: "http://app.example:3000", "sec-fetch-site": "cross-site", ...json },
      body: "{}",
    });
    expect(answer.status).toBe(201);
    expect(answer.headers["access-control-allow-origin"]).toBe("http://app.example:3000");
    const star = gatewayConfigSchema.safeParse({ auth: { mode: "none" }, cors: { allow_origins: ["*"] } });
    expect(star.error?.issues[0]?.path).toEqual(["cors", "allow_origins"]);
  });

  it("refuses a JSON route's body sent as text/plain or a form (415), the simple requests a page may send", async () => {
    const gw = await keyless();
    for (const [type, body] of [
      ["text/plain", '{"thread_id":"planted"}'],
      ["application/x-www-form-urlencoded", '{"thread_id":"planted"}='],
      ["multipart/form-data; boundary=x", "--x--\r\n"],
      [undefined, '{"thread_id":"planted"}'],
    ] as const) {
      const answer = await send(`${gw.url}/api/threads`, {
        method: "POST",
        headers: type === undefined ? { "content-length": String(body.length) } : { "content-type": type },
        body,
      });
      expect(answer.status, type).toBe(415);
      expect(errorCode(answer)).toBe("ANTLER_ERR_GATEWAY_UNSUPPORTED_MEDIA_TYPE");
    }
    await gw.client.createThread({ threadId: "t", userId: "solo" });
    const run = await send(`${gw.url}/api/threads/t/runs/wait`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: '{"message":"hi"}',
    });
    expect(run.status).toBe(415);
    expect(await gw.client.listRuns("t", { userId: "solo" })).toEqual([]);
  });

  it("refuses a cross-site multipart upload before reading it, and leaves no file behind", async () => {
    const gw = await keyless();
    await gw.client.createThread({ threadId: "t", userId: "solo" });
    const body =
      '--b\r\nContent-Disposition: form-data; name="files"; filename="x.txt"\r\nContent-Type: text/plain\r\n\r\nplanted\r\n--b--\r\n';
    const answer = await send(`${gw.url}/api/threads/t/uploads`, {
      method: "POST",
      headers: { "content-type": "multipart/form-data; boundary=b", origin: "http://127.0.0.1:1", "sec-fetch-site": "same-site" },
      body,
    });
    expect(answer.status).toBe(403);
    const uploads = threadPaths(gw.baseDir, "solo", "t").uploads;
    expect(readdirSafe(uploads)).toEqual([]);
    const own = await send(`${gw.url}/api/threads/t/uploads`, {
      method: "POST",
      headers: { "content-type": "multipart/form-data; boundary=b", origin: gw.url, "sec-fetch-site": "same-origin" },
      body,
    });
    expect(own.status).toBe(201);
  });
});

describe("reads in mode none", () => {
  it("sends no CORS headers to another origin, and refuses /api reads another site embeds (no-cors), not navigations", async () => {
    const gw = await keyless();
    await gw.client.createThread({ threadId: "secret", userId: "solo" });
    const read = await send(`${gw.url}/api/threads/secret`, { headers: { origin: "http://127.0.0.1:1" } });
    expect(read.headers["access-control-allow-origin"]).toBeUndefined();
    const preflight = await send(`${gw.url}/api/threads`, {
      method: "OPTIONS",
      headers: { origin: "http://127.0.0.1:1", "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    });
    expect(preflight.headers["access-control-allow-origin"]).toBeUndefined();
    const embedded = await send(`${gw.url}/api/threads/secret`, {
      headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors" },
    });
    expect(embedded.status).toBe(403);
    expect(embedded.body).not.toContain('"thread_id"');
    const followed = await send(`${gw.url}/api/threads/secret`, {
      headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" },
    });
    expect(followed.status).toBe(200);
  });
});

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
