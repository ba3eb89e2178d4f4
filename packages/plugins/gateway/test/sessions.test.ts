import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { gatewayConfigSchema } from "../src/config.js";
import { ALICE_KEY, startTestGateway } from "./fixtures.js";

const KEYS = [{ key: ALICE_KEY, user: "alice" }];

/** Signs in with Alice's key; returns the Set-Cookie line and the `name=value` pair a browser would send back. */
async function signIn(gw: Awaited<ReturnType<typeof startTestGateway>>, headers: Record<string, string> = {}) {
  const response = await gw.call("/api/session", { method: "POST", headers });
  expect(response.status).toBe(201);
  const setCookie = response.headers.get("set-cookie") ?? "";
  return { response, setCookie, cookie: setCookie.split(";")[0] ?? "" };
}

const asBrowser = (cookie: string, extra: Record<string, string> = {}) => ({ key: null, headers: { cookie, ...extra } });

describe("browser sessions (POST/GET/DELETE /api/session)", () => {
  it("issues an HttpOnly, SameSite=Strict cookie with an expiry for a valid key, not Secure over plain HTTP", async () => {
    const gw = await startTestGateway();
    const { response, setCookie, cookie } = await signIn(gw);
    expect(setCookie).toMatch(/^antler_session=[A-Za-z0-9_-]{40,};/);
    expect(setCookie).toContain("HttpOnly");
    expect(setCookie).toContain("SameSite=Strict");
    expect(setCookie).toContain("Path=/");
    expect(setCookie).toMatch(/Max-Age=43200/);
    expect(setCookie).toMatch(/Expires=/);
    expect(setCookie).not.toContain("Secure");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toMatchObject({ user: "alice", expires_at: expect.any(String) });
    // The cookie alone now reads the API as Alice.
    const who = await gw.call("/api/session", asBrowser(cookie));
    expect(await who.json()).toMatchObject({ user: "alice", via: "session" });
    expect((await gw.call("/api/threads", asBrowser(cookie))).status).toBe(200);
  });

  it("marks the cookie Secure behind a TLS proxy (X-Forwarded-Proto: https) and when configured always", async () => {
    const gw = await startTestGateway();
    expect((await signIn(gw, { "x-forwarded-proto": "https" })).setCookie).toContain("Secure");
    const always = await startTestGateway({ config: { auth: { mode: "api_keys", api_keys: KEYS, session_cookie_secure: "always" } } });
    expect((await signIn(always)).setCookie).toContain("Secure");
  });

  it("refuses to start a session without a key, with a bad key, or from a session cookie", async () => {
    const gw = await startTestGateway();
    expect((await gw.call("/api/session", { method: "POST", key: null })).status).toBe(401);
    expect((await gw.call("/api/session", { method: "POST", key: "wrong-key-0123456789abcdef" })).status).toBe(401);
    const { cookie } = await signIn(gw);
    const again = await gw.call("/api/session", { method: "POST", ...asBrowser(cookie, { "x-antler-csrf": "1" }) });
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: { message: string } }).error.message).toBe("a session starts from an API key");
  });

  it("sign-out revokes the session on the server: the same cookie replayed afterwards is 401", async () => {
    const gw = await startTestGateway();
    const { cookie } = await signIn(gw);
    const out = await gw.call("/api/session", { method: "DELETE", ...asBrowser(cookie, { "x-antler-csrf": "1" }) });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^antler_session=;.*Max-Age=0/);
    const replayed = await gw.call("/api/threads", asBrowser(cookie));
    expect(replayed.status).toBe(401);
    expect(((await replayed.json()) as { error: { message: string } }).error.message).toBe("the session has expired or was signed out");
  });

  it("an expired session is refused with 401 even if the browser still sends the cookie", async () => {
    const gw = await startTestGateway({ config: { auth: { mode: "api_keys", api_keys: KEYS, session_ttl_seconds: 1 } } });
    const { cookie, setCookie } = await signIn(gw);
    expect(setCookie).toContain("Max-Age=1");
    expect((await gw.call("/api/threads", asBrowser(cookie))).status).toBe(200);
    await sleep(1100);
    const late = await gw.call("/api/threads", asBrowser(cookie));
    expect(late.status).toBe(401);
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_GATEWAY_UNAUTHENTICATED");
  });

  it("refuses a cookie-authenticated write without the X-Antler-CSRF header or from another origin; the key still works", async () => {
    const gw = await startTestGateway();
    const { cookie } = await signIn(gw);
    // A form or fetch another site forges: no custom header (a page cannot add one cross-origin without a preflight).
    const forged = await gw.call("/api/threads", { method: "POST", json: {}, ...asBrowser(cookie, { origin: "http://evil.example" }) });
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_GATEWAY_CROSS_SITE_REQUEST");
    const noHeader = await gw.call("/api/threads", { method: "POST", json: {}, ...asBrowser(cookie) });
    expect(noHeader.status).toBe(403);
    // The header from a foreign Origin is still refused; from the gateway's own origin (or a listed one) it passes.
    const foreign = await gw.call("/api/threads", {
      method: "POST",
      json: {},
      ...asBrowser(cookie, { "x-antler-csrf": "1", origin: "http://evil.example" }),
    });
    expect(foreign.status).toBe(403);
    const own = await gw.call("/api/threads", {
      method: "POST",
      json: {},
      ...asBrowser(cookie, { "x-antler-csrf": "1", origin: new URL(gw.url).origin }),
    });
    expect(own.status).toBe(201);
    const listed = await gw.call("/api/threads", {
      method: "POST",
      json: {},
      ...asBrowser(cookie, { "x-antler-csrf": "1", origin: "http://app.example" }),
    });
    expect(listed.status).toBe(201);
    // Reads need no header; programs with a key need none either.
    expect((await gw.call("/api/threads", asBrowser(cookie))).status).toBe(200);
    expect((await gw.call("/api/threads", { method: "POST", json: {} })).status).toBe(201);
  });

  it("rejects a session lifetime outside 1 second .. 30 days, naming the setting", () => {
    const bad = gatewayConfigSchema.safeParse({ auth: { api_keys: KEYS, session_ttl_seconds: 0 } });
    expect(bad.error?.issues[0]?.path).toEqual(["auth", "session_ttl_seconds"]);
    expect(gatewayConfigSchema.safeParse({ auth: { api_keys: KEYS, session_ttl_seconds: 31 * 24 * 3600 } }).success).toBe(false);
  });
});
