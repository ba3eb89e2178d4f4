import { isAntlerError } from "@antler/kernel";
import { type WebCallContext, WebProviderHttpError } from "@antler/tools-web";
import { type LoopbackServer, stubLookup, webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import fastcrwToolsPlugin, { createFastcrwProvider, fastcrwConfigSchema, mapFastcrwSearchResults } from "../src/index.js";
import { crwError, crwResults, startFakeFastcrw } from "./fake-fastcrw.js";

const KEY = "crw_live_test_51f0";

function callContext(): WebCallContext {
  return { fetch: globalThis.fetch, signal: new AbortController().signal, traceId: "trace-fastcrw-test" };
}

const caps = { maxResults: 10, maxSnippetChars: 600, maxTitleChars: 200 };

describe("fastCRW mapping", () => {
  it("reads the hosted flat list, the self-hosted data.results and the grouped data.web alike", () => {
    const list = crwResults(2);
    for (const data of [list, { results: list }, { web: list }, { results: { web: list } }]) {
      expect(mapFastcrwSearchResults({ success: true, data }, caps)).toEqual([
        { title: "Rust async runtime, part 1", url: "https://docs.example.rs/async/1", snippet: "Part 1: executors, wakers and futures." },
        { title: "Rust async runtime, part 2", url: "https://docs.example.rs/async/2", snippet: "Part 2: executors, wakers and futures." },
      ]);
    }
  });

  it("reports success: false and a data field that is no list", () => {
    expect(() => mapFastcrwSearchResults({ success: false, error: "quota exhausted" }, caps)).toThrow(
      "fastcrw reported a failed search: quota exhausted",
    );
    expect(() => mapFastcrwSearchResults({ success: true, data: "nope" }, caps)).toThrow(/unexpected search shape/);
  });
});

describe("fastCRW provider against a loopback hosted API", () => {
  let crw: LoopbackServer;
  beforeAll(async () => {
    crw = await startFakeFastcrw({ key: KEY });
  });
  afterAll(() => crw.close());
  beforeEach(() => {
    crw.requests.length = 0;
  });

  const provider = (overrides: Record<string, unknown> = {}, env: Record<string, string | undefined> = { CRW_API_KEY: KEY }) =>
    createFastcrwProvider(fastcrwConfigSchema.parse({ base_url: crw.url, ...overrides }), { env });

  it("sends POST /v1/search with a Bearer key and { query, limit, lang, tbs }", async () => {
    const results = await provider({ lang: "en", tbs: "qdr:w" }).search!("rust async", { maxResults: 3 }, callContext());
    const [req] = crw.requests;
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/v1/search");
    expect(req?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.json).toEqual({ query: "rust async", limit: 3, lang: "en", tbs: "qdr:w" });
    expect(results).toHaveLength(3);
  });

  it("clamps limit to 20 and the config's max_results", async () => {
    await provider({ max_results: 20 }).search!("q", { maxResults: 80 }, callContext());
    await provider({ max_results: 4 }).search!("q", { maxResults: 80 }, callContext());
    expect(crw.requests.map((r) => (r.json as { limit: number }).limit)).toEqual([20, 4]);
  });

  it("sends POST /v1/scrape with { url, formats: [markdown], onlyMainContent, renderJs, deadlineMs } and maps the page", async () => {
    const page = await provider({ render_js: true, deadline_ms: 15_000, only_main_content: false }).fetch!(
      "https://docs.example.rs/async",
      callContext(),
    );
    expect(crw.requests[0]?.path).toBe("/v1/scrape");
    expect(crw.requests[0]?.json).toEqual({
      url: "https://docs.example.rs/async",
      formats: ["markdown"],
      onlyMainContent: false,
      renderJs: true,
      deadlineMs: 15_000,
    });
    expect(page).toEqual({
      url: "https://docs.example.rs/async",
      title: "Async in Rust",
      content: "# Async in Rust\n\nFutures do nothing until polled.",
      format: "markdown",
    });
  });

  it("reports a page that answered 404 through fastCRW", async () => {
    await expect(provider().fetch!("https://gone.example.org/", callContext())).rejects.toThrow(
      "fastcrw reached https://gone.example.org/, but the page answered HTTP 404",
    );
  });

  it("a wrong key is WebProviderHttpError 401 with fastCRW's error", async () => {
    const error = await provider({}, { CRW_API_KEY: "nope" }).search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebProviderHttpError);
    expect((error as WebProviderHttpError).status).toBe(401);
    expect((error as WebProviderHttpError).body).toContain("Missing or invalid API key");
  });

  it("the hosted API without a key fails before any request, naming CRW_API_KEY", async () => {
    const hosted = createFastcrwProvider(fastcrwConfigSchema.parse({}), { env: {} });
    const error = await hosted.search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e);
    expect(isAntlerError(error)).toBe(true);
    expect((error as Error).message).toContain("CRW_API_KEY");
  });
});

describe("fastCRW provider against a loopback self-hosted engine", () => {
  let engine: LoopbackServer;
  let searchless: LoopbackServer;
  beforeAll(async () => {
    engine = await startFakeFastcrw({ shape: "self-hosted" });
    searchless = await startFakeFastcrw({ searchDisabled: true });
  });
  afterAll(async () => {
    await engine.close();
    await searchless.close();
  });

  it("sends no Authorization header without a key, and reads data.results", async () => {
    const results = await createFastcrwProvider(fastcrwConfigSchema.parse({ base_url: engine.url }), { env: {} }).search!(
      "q",
      { maxResults: 2 },
      callContext(),
    );
    expect(engine.requests[0]?.headers.authorization).toBeUndefined();
    expect(results.map((r) => r.url)).toEqual(["https://docs.example.rs/async/1", "https://docs.example.rs/async/2"]);
  });

  it("says search is disabled on the engine instead of reporting a retryable 503", async () => {
    const error = await createFastcrwProvider(fastcrwConfigSchema.parse({ base_url: searchless.url }), { env: {} }).search!(
      "q",
      { maxResults: 2 },
      callContext(),
    ).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(WebProviderHttpError);
    expect((error as Error).message).toContain("has search disabled (search_disabled)");
  });
});

describe("fastCRW through @antler/tools-web's tools", () => {
  let crw: LoopbackServer;
  let searchless: LoopbackServer;
  beforeAll(async () => {
    crw = await startFakeFastcrw({ key: KEY });
    searchless = await startFakeFastcrw({ searchDisabled: true });
  });
  afterAll(async () => {
    await crw.close();
    await searchless.close();
  });
  beforeEach(() => {
    crw.requests.length = 0;
    searchless.requests.length = 0;
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  const { tool, invoke } = webToolsHarness({
    providerPlugin: fastcrwToolsPlugin,
    providerConfig: () => ({ api_key: KEY, base_url: crw.url }),
    webOptions: { sleep: async () => {}, lookup: stubLookup() },
    webConfig: { search: "fastcrw", fetch: "fastcrw", retry: { attempts: 3, initial_delay_ms: 1, max_delay_ms: 5000 } },
  });
  const text = (m: { content: unknown }) => String(m.content);

  it("web_fetch returns the scraped Markdown with its title, after a request carrying X-Trace-Id", async () => {
    const message = await invoke(await tool("web_fetch"), { url: "https://docs.example.rs/async" });
    expect(message.status).toBe("success");
    expect(text(message)).toContain("Async in Rust");
    expect(text(message)).toContain("Futures do nothing until polled.");
    expect(crw.requests[0]?.headers["x-trace-id"]).toMatch(/^\S+$/);
  });

  it("search_disabled is reported once, without retries", async () => {
    const message = await invoke(await tool("web_search", { base_url: searchless.url }), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("search_disabled");
    expect(searchless.requests).toHaveLength(1);
  });

  it("HTTP 401 and 403 become error ToolMessages naming CRW_API_KEY", async () => {
    const unauthorized = await invoke(await tool("web_search", { api_key: "wrong" }), { query: "q" });
    expect(unauthorized.status).toBe("error");
    expect(text(unauthorized)).toContain("HTTP 401");
    expect(text(unauthorized)).toContain("CRW_API_KEY");
    crw.queue(crwError(403, "plan does not include scrape", "forbidden"));
    const forbidden = await invoke(await tool("web_fetch"), { url: "https://docs.example.rs/async" });
    expect(text(forbidden)).toContain("HTTP 403");
    expect(text(forbidden)).toContain("CRW_API_KEY");
  });

  it("a 429 with Retry-After is retried and the next answer is returned", async () => {
    crw.queue({ ...crwError(429, "rate limit exceeded", "rate_limited"), headers: { "retry-after": "0" } });
    const message = await invoke(await tool("web_search"), { query: "q" });
    expect(message.status).toBe("success");
    expect(crw.requests).toHaveLength(2);
  });

  it("a 500 on every try is reported after retry.attempts tries", async () => {
    const failure = crwError(500, "renderer crashed", "internal");
    crw.queue(failure, failure, failure);
    const message = await invoke(await tool("web_fetch"), { url: "https://docs.example.rs/async" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 500");
    expect(crw.requests).toHaveLength(3);
  });

  it("a 200 that is not JSON becomes an error ToolMessage quoting its first bytes", async () => {
    crw.queue({ status: 200, body: "<html>Bad gateway</html>", headers: { "content-type": "text/html" } });
    const message = await invoke(await tool("web_search"), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("not JSON");
    expect(text(message)).toContain("Bad gateway");
  });

  it("a fastCRW that does not answer within timeout_seconds gives a timeout ToolMessage", async () => {
    crw.queue({ status: 200, body: {}, delayMs: 5000 });
    const message = await invoke(await tool("web_fetch", {}, { timeout_seconds: 0.3 }), { url: "https://docs.example.rs/async" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("fastcrw did not answer within 0.3 s");
  });
});
