import { type WebCallContext, WebProviderHttpError } from "@antler/tools-web";
import type { LoopbackServer } from "@antler/tools-web/testing";
import { stubLookup, webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import crawl4aiToolsPlugin, { crawl4aiConfigSchema, createCrawl4aiProvider } from "../src/index.js";
import { crawl4aiError, startFakeCrawl4ai } from "./fake-crawl4ai.js";

const TOKEN = "c4a-test-token-5b9";
const PAGE = "https://deer.example.org/antlers";

function callContext(): WebCallContext {
  return { fetch: globalThis.fetch, signal: new AbortController().signal, traceId: "trace-crawl4ai-test" };
}

describe("Crawl4AI config", () => {
  it("refuses the bm25 and llm filters without a query, naming the query field", () => {
    const result = crawl4aiConfigSchema.safeParse({ filter: "bm25" });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["query"]);
    expect(crawl4aiConfigSchema.safeParse({ filter: "llm", query: "antler growth" }).success).toBe(true);
  });
});

describe("Crawl4AI provider against a loopback Crawl4AI server", () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startFakeCrawl4ai(TOKEN);
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  const provider = (overrides: Record<string, unknown> = {}, env: Record<string, string | undefined> = { CRAWL4AI_API_TOKEN: TOKEN }) =>
    createCrawl4aiProvider(crawl4aiConfigSchema.parse({ base_url: server.url, ...overrides }), { env });

  it("sends POST /md with a Bearer token and { url, f: fit }, and returns the Markdown", async () => {
    const page = await provider().fetch!(PAGE, callContext());
    const [req] = server.requests;
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/md");
    expect(req?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.json).toEqual({ url: PAGE, f: "fit" });
    expect(page).toEqual({ url: PAGE, content: "# Antler growth\n\nAntlers are shed and regrown every year.", format: "markdown" });
  });

  it("sends q with the bm25 filter and c=1 to bypass the cache", async () => {
    await provider({ filter: "bm25", query: "antler growth", bypass_cache: true }).fetch!(PAGE, callContext());
    expect(server.requests[0]?.json).toEqual({ url: PAGE, f: "bm25", q: "antler growth", c: "1" });
  });

  it("does not send q with the fit or raw filters", async () => {
    await provider({ filter: "raw", query: "ignored" }).fetch!(PAGE, callContext());
    expect(server.requests[0]?.json).toEqual({ url: PAGE, f: "raw" });
  });

  it("sends no Authorization header when no token is configured", async () => {
    const open = await startFakeCrawl4ai();
    try {
      const keyless = createCrawl4aiProvider(crawl4aiConfigSchema.parse({ base_url: open.url }), { env: {} });
      await keyless.fetch!(PAGE, callContext());
      expect(open.requests[0]?.headers.authorization).toBeUndefined();
    } finally {
      await open.close();
    }
  });

  it("a wrong token is WebProviderHttpError 401 with the server's detail", async () => {
    const error = await provider({ api_key: "wrong" }).fetch!(PAGE, callContext()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebProviderHttpError);
    expect((error as WebProviderHttpError).status).toBe(401);
    expect((error as WebProviderHttpError).body).toContain("Invalid or missing token");
  });

  it("a failed crawl (success: false) and empty Markdown are errors naming the URL", async () => {
    await expect(provider().fetch!("https://refused.example.org/", callContext())).rejects.toThrow(
      "crawl4ai reported a failed crawl of https://refused.example.org/",
    );
    await expect(provider().fetch!("https://empty.example.org/", callContext())).rejects.toThrow(
      "crawl4ai returned empty Markdown for https://empty.example.org/ (filter fit)",
    );
  });
});

describe("Crawl4AI through @antler/tools-web's web_fetch", () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startFakeCrawl4ai(TOKEN);
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  const { tool, invoke } = webToolsHarness({
    providerPlugin: crawl4aiToolsPlugin,
    providerConfig: () => ({ api_key: TOKEN, base_url: server.url }),
    webOptions: { sleep: async () => {}, lookup: stubLookup() },
    webConfig: { fetch: "crawl4ai", retry: { attempts: 3, initial_delay_ms: 1, max_delay_ms: 5000 } },
  });
  const text = (m: { content: unknown }) => String(m.content);

  it("returns the page's Markdown, after a POST /md carrying X-Trace-Id", async () => {
    const message = await invoke(await tool("web_fetch"), { url: PAGE });
    expect(message.status).toBe("success");
    expect(text(message)).toContain("Antlers are shed and regrown every year.");
    expect(server.requests[0]?.headers["x-trace-id"]).toMatch(/^\S+$/);
  });

  it("refuses a private page address before the server is called", async () => {
    const message = await invoke(await tool("web_fetch"), { url: "http://10.0.0.5/admin" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("10.0.0.5");
    expect(server.requests).toHaveLength(0);
  });

  it("HTTP 401 and 403 become error ToolMessages naming CRAWL4AI_API_TOKEN", async () => {
    const unauthorized = await invoke(await tool("web_fetch", { api_key: "wrong" }), { url: PAGE });
    expect(unauthorized.status).toBe("error");
    expect(text(unauthorized)).toContain("HTTP 401");
    expect(text(unauthorized)).toContain("CRAWL4AI_API_TOKEN");
    server.queue(crawl4aiError(403, "Forbidden"));
    const forbidden = await invoke(await tool("web_fetch"), { url: PAGE });
    expect(text(forbidden)).toContain("HTTP 403");
    expect(text(forbidden)).toContain("CRAWL4AI_API_TOKEN");
  });

  it("a 429 with Retry-After is retried and the next answer is returned", async () => {
    server.queue({ ...crawl4aiError(429, "Rate limit exceeded"), headers: { "retry-after": "0" } });
    const message = await invoke(await tool("web_fetch"), { url: PAGE });
    expect(message.status).toBe("success");
    expect(server.requests).toHaveLength(2);
  });

  it("a 500 on every try is reported after retry.attempts tries", async () => {
    const failure = crawl4aiError(500, "Browser crashed");
    server.queue(failure, failure, failure);
    const message = await invoke(await tool("web_fetch"), { url: PAGE });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 500");
    expect(text(message)).toContain("Browser crashed");
    expect(server.requests).toHaveLength(3);
  });

  it("a 200 that is not JSON becomes an error ToolMessage quoting its first bytes", async () => {
    server.queue({ status: 200, body: "<html>Crawl4AI Playground</html>", headers: { "content-type": "text/html" } });
    const message = await invoke(await tool("web_fetch"), { url: PAGE });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("not JSON");
    expect(text(message)).toContain("Crawl4AI Playground");
  });

  it("a failed crawl becomes an error ToolMessage", async () => {
    const message = await invoke(await tool("web_fetch"), { url: "https://refused.example.org/" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("failed crawl");
  });

  it("a server that does not answer within timeout_seconds gives a timeout ToolMessage", async () => {
    server.queue({ status: 200, body: {}, delayMs: 5000 });
    const message = await invoke(await tool("web_fetch", {}, { timeout_seconds: 0.3 }), { url: PAGE });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("crawl4ai did not answer within 0.3 s");
  });
});
