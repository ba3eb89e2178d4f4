import { AntlerError, ErrorCodes } from "@antler/kernel";
import { createTestKernel } from "@antler/kernel/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  capText,
  defineWebProviderPlugin,
  endpoint,
  isHttpUrl,
  readJson,
  requireApiKey,
  trimBaseUrl,
  WEB_TOOLS_PLUGIN_NAME,
  WebProviderHttpError,
} from "../src/index.js";
import { type LoopbackServer, startLoopbackServer, webToolsHarness } from "../src/testing/index.js";

describe("capText", () => {
  it("returns text within the cap unchanged", () => {
    expect(capText("short text", 10)).toBe("short text");
  });

  it("cuts on a space in the last fifth and marks the cut with …, within the cap", () => {
    const out = capText("antlers are shed every year by deer", 30);
    expect(out).toBe("antlers are shed every year…");
    expect(out.length).toBeLessThanOrEqual(30);
  });

  it("cuts hard when no space is near the end", () => {
    expect(capText("D".repeat(500), 100)).toBe(`${"D".repeat(99)}…`);
  });

  it("never ends on half a surrogate pair", () => {
    const out = capText(`${"a".repeat(8)}🦌🦌🦌`, 10);
    expect(out).toBe(`${"a".repeat(8)}…`);
  });
});

describe("endpoint, trimBaseUrl and isHttpUrl", () => {
  it("joins a base URL and a path with or without slashes on either side", () => {
    expect(endpoint("https://api.example.com/v1", "search")).toBe("https://api.example.com/v1/search");
    expect(endpoint("https://api.example.com/v1//", "/search")).toBe("https://api.example.com/v1/search");
    expect(endpoint("https://html.example.com", "")).toBe("https://html.example.com/");
    expect(trimBaseUrl("http://127.0.0.1:8080/searx/")).toBe("http://127.0.0.1:8080/searx");
  });

  it("accepts only absolute http(s) URLs", () => {
    expect(isHttpUrl("https://example.org/a")).toBe(true);
    expect(isHttpUrl("http://example.org")).toBe(true);
    expect(isHttpUrl("javascript:alert(1)")).toBe(false);
    expect(isHttpUrl("/relative")).toBe(false);
    expect(isHttpUrl(undefined)).toBe(false);
  });
});

describe("readJson against a loopback server", () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startLoopbackServer(() => ({ body: { ok: true } }));
  });
  afterAll(() => server.close());

  it("parses a 2xx JSON answer", async () => {
    expect(await readJson("vendor", await fetch(server.url))).toEqual({ ok: true });
  });

  it("reports a 2xx answer that is not JSON with its first bytes", async () => {
    server.queue({ body: "<html>maintenance</html>", headers: { "content-type": "text/html" } });
    await expect(readJson("vendor", await fetch(server.url))).rejects.toThrow(
      "vendor answered HTTP 200 with a body that is not JSON: <html>maintenance</html>",
    );
  });

  it("turns a non-2xx answer into WebProviderHttpError with its Retry-After", async () => {
    server.queue({ status: 429, body: { error: "slow down" }, headers: { "retry-after": "7" } });
    const error = await readJson("vendor", await fetch(server.url)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebProviderHttpError);
    expect(error).toMatchObject({ provider: "vendor", status: 429, retryAfterSeconds: 7 });
  });
});

describe("startLoopbackServer", () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startLoopbackServer((request, index) => ({ body: { from: "handler", index, path: request.path } }));
  });
  afterAll(() => server.close());

  it("answers queued replies in order before the handler, and records method, path, query, headers and body", async () => {
    server.requests.length = 0;
    server.queue({ status: 503, body: "down" }, { status: 201, body: { from: "queue" } });
    const first = await fetch(`${server.url}/a?q=1`, { method: "POST", headers: { "x-test": "yes" }, body: '{"n":1}' });
    const second = await fetch(`${server.url}/b`);
    const third = await fetch(`${server.url}/c`);
    expect([first.status, second.status, third.status]).toEqual([503, 201, 200]);
    expect(await second.json()).toEqual({ from: "queue" });
    expect(await third.json()).toEqual({ from: "handler", index: 2, path: "/c" });
    expect(server.requests[0]).toMatchObject({ method: "POST", path: "/a", text: '{"n":1}', json: { n: 1 } });
    expect(server.requests[0]?.query.get("q")).toBe("1");
    expect(server.requests[0]?.headers["x-test"]).toBe("yes");
  });

  it("holds back a reply with delayMs, so a client with a shorter timeout gives up", async () => {
    server.queue({ body: {}, delayMs: 5000 });
    await expect(fetch(server.url, { signal: AbortSignal.timeout(200) })).rejects.toThrow();
  });
});

describe("requireApiKey", () => {
  const options = {
    envVar: "VENDOR_API_KEY",
    vendor: "Vendor",
    where: "plugins[vendor].config.api_key",
    keyPage: "https://vendor.example/keys",
  };

  it("prefers the configured key, then the environment variable", () => {
    expect(requireApiKey({ ...options, configured: "k-config", env: { VENDOR_API_KEY: "k-env" } })).toBe("k-config");
    expect(requireApiKey({ ...options, configured: undefined, env: { VENDOR_API_KEY: "k-env" } })).toBe("k-env");
  });

  it("throws CONFIG_ENV_MISSING naming the env var, the config path and where to get a key", () => {
    let error: unknown;
    try {
      requireApiKey({ ...options, configured: undefined, env: {} });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AntlerError);
    expect(error).toMatchObject({ code: ErrorCodes.CONFIG_ENV_MISSING, where: "plugins[vendor].config.api_key" });
    expect((error as AntlerError).message).toContain("no Vendor API key: VENDOR_API_KEY is not set and api_key is not configured");
    expect((error as AntlerError).hint).toBe("Export VENDOR_API_KEY (from https://vendor.example/keys) or set api_key: ${VENDOR_API_KEY}.");
  });
});

describe("defineWebProviderPlugin", () => {
  const echoPlugin = defineWebProviderPlugin({
    name: "@example/tools-echo",
    version: "1.0.0",
    kernel: "^0.1.0",
    dependsOn: [WEB_TOOLS_PLUGIN_NAME],
    configSchema: z.object({ prefix: z.string().default("echo") }),
    createProvider: (config, ctx) => ({
      name: "echo",
      async search(query) {
        return [{ title: `${config.prefix}: ${query} (${ctx.plugin.name})`, url: "https://echo.example/1", snippet: query }];
      },
    }),
  });
  const web = webToolsHarness({ providerPlugin: echoPlugin, webConfig: { search: "echo" } });

  it("registers the provider built from the plugin's validated config, for @antler/tools-web's tools", async () => {
    const message = await (await web.caller("web_search", { prefix: "hi" }))({ query: "antlers" });
    expect(message.status).toBe("success");
    expect(String(message.content)).toContain("hi: antlers (@example/tools-echo)");
  });

  it("keeps the manifest's dependsOn: without @antler/tools-web the boot fails naming it", async () => {
    const error = await createTestKernel({ plugins: [echoPlugin] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCodes.PLUGIN_MISSING_DEPENDENCY });
    expect(String((error as Error).message)).toContain(WEB_TOOLS_PLUGIN_NAME);
  });
});
