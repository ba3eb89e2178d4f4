import { type WebCallContext, WebProviderHttpError } from "@antler/tools-web";
import { stubLookup, webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import sofyaToolsPlugin, { createSofyaProvider, mapSofyaSearchResults, sofyaConfigSchema } from "../src/index.js";
import { type FakeSofya, longPageText, sofyaError, sofyaSearchBody, startFakeSofya } from "./fake-sofya.js";

const KEY = "ay_live_sofya-test-key";

function callContext(): WebCallContext {
  return { fetch: globalThis.fetch, signal: new AbortController().signal, traceId: "trace-sofya-test" };
}

describe("Sofya mapping", () => {
  it("caps each result's page content at 2,000 characters by default", () => {
    expect(longPageText(1).length).toBeGreaterThan(4000);
    const { max_content_chars, max_title_chars } = sofyaConfigSchema.parse({});
    expect(max_content_chars).toBe(2000);
    const results = mapSofyaSearchResults(sofyaSearchBody("antlers", 3, "basic"), {
      maxResults: 3,
      maxContentChars: max_content_chars,
      maxTitleChars: max_title_chars,
    });
    expect(results).toHaveLength(3);
    for (const r of results) {
      expect(r.snippet.length).toBeLessThanOrEqual(2000);
      expect(r.snippet.length).toBeGreaterThan(1900);
      expect(r.snippet.endsWith("…")).toBe(true);
    }
  });

  it("uses the description when a result has no page content, and keeps the publication date", () => {
    const [first] = mapSofyaSearchResults(sofyaSearchBody("antlers", 1, "snippets"), {
      maxResults: 5,
      maxContentChars: 2000,
      maxTitleChars: 200,
    });
    expect(first).toEqual({
      title: "Antlers, part 1",
      url: "https://deer.example.org/antlers/1",
      snippet: "Short description 1 of antler growth.",
      publishedAt: "2026-11-29",
    });
  });
});

describe("Sofya provider against a loopback Sofya API", () => {
  let sofya: FakeSofya;
  beforeAll(async () => {
    sofya = await startFakeSofya(KEY);
  });
  afterAll(() => sofya.close());
  beforeEach(() => {
    sofya.requests.length = 0;
  });

  const provider = (overrides: Record<string, unknown> = {}, env: Record<string, string | undefined> = { SOFYA_API_KEY: KEY }) =>
    createSofyaProvider(sofyaConfigSchema.parse({ base_url: sofya.baseUrl, ...overrides }), { env });

  it("sends POST /v1/search with a Bearer key and { query, max_results, search_depth }", async () => {
    const results = await provider().search!("antler growth", { maxResults: 3 }, callContext());
    const [req] = sofya.requests;
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/v1/search");
    expect(req?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(sofya.bodies()[0]).toEqual({ query: "antler growth", max_results: 3, search_depth: "basic" });
    expect(results.map((r) => r.url)).toEqual([1, 2, 3].map((i) => `https://deer.example.org/antlers/${i}`));
  });

  it("adds freshness, include_domains and topic when configured, and clamps max_results to 20", async () => {
    await provider({
      max_results: 20,
      search_depth: "snippets",
      freshness: "week",
      include_domains: ["nps.gov"],
      topic: "news",
    }).search!("antlers", { maxResults: 99 }, callContext());
    expect(sofya.bodies()[0]).toEqual({
      query: "antlers",
      max_results: 20,
      search_depth: "snippets",
      freshness: "week",
      include_domains: ["nps.gov"],
      topic: "news",
    });
  });

  it("sends POST /v1/fetch with { urls: [url] } and returns the page's Markdown", async () => {
    const page = await provider().fetch!("https://deer.example.org/antlers/1", callContext());
    expect(sofya.requests[0]?.path).toBe("/v1/fetch");
    expect(sofya.bodies()[0]).toEqual({ urls: ["https://deer.example.org/antlers/1"] });
    expect(page).toEqual({
      url: "https://deer.example.org/antlers/1",
      title: "Antler growth",
      content: "# Antler growth\n\nAntlers are shed and regrown every year.",
      format: "markdown",
    });
  });

  it("reports a page Sofya could not fetch with Sofya's reason", async () => {
    const error = await provider().fetch!("https://unreachable.example.org/", callContext()).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      "sofya could not fetch https://unreachable.example.org/: The page could not be loaded (HTTP 404)",
    );
  });

  it("fails without a request when no key is configured, naming SOFYA_API_KEY", async () => {
    const error = await provider({}, {}).search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e);
    expect((error as Error).message).toContain("SOFYA_API_KEY");
    expect(sofya.requests).toHaveLength(0);
  });

  it("turns Sofya's 401 into WebProviderHttpError 401 with its body", async () => {
    const error = await provider({}, { SOFYA_API_KEY: "nope" }).search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebProviderHttpError);
    expect((error as WebProviderHttpError).status).toBe(401);
    expect((error as WebProviderHttpError).body).toContain("Invalid API key");
  });
});

describe("Sofya through @antler/tools-web's tools", () => {
  let sofya: FakeSofya;
  beforeAll(async () => {
    sofya = await startFakeSofya(KEY);
  });
  afterAll(() => sofya.close());
  beforeEach(() => {
    sofya.requests.length = 0;
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  const { tool, invoke } = webToolsHarness({
    providerPlugin: sofyaToolsPlugin,
    providerConfig: () => ({ api_key: KEY, base_url: sofya.baseUrl }),
    webOptions: { sleep: async () => {}, lookup: stubLookup() },
    // A snippet cap above Sofya's own, so the 2,000-character cut seen here is the provider's.
    webConfig: {
      search: "sofya",
      fetch: "sofya",
      snippet_max_chars: 10_000,
      retry: { attempts: 3, initial_delay_ms: 1, max_delay_ms: 5000 },
    },
  });
  const text = (m: { content: unknown }) => String(m.content);

  it("web_search returns each result's page content cut at 2,000 characters", async () => {
    const message = await invoke(await tool("web_search"), { query: "antlers", max_results: 2 });
    expect(message.status).toBe("success");
    const body = JSON.parse(text(message)) as { results: Array<{ snippet: string }> };
    expect(body.results).toHaveLength(2);
    for (const r of body.results) expect(r.snippet.length).toBeLessThanOrEqual(2000);
    expect(body.results[0]?.snippet.length).toBeGreaterThan(1900);
  });

  it("max_content_chars lowers the per-result cap", async () => {
    const message = await invoke(await tool("web_search", { max_content_chars: 300 }), { query: "antlers", max_results: 1 });
    const body = JSON.parse(text(message)) as { results: Array<{ snippet: string }> };
    expect(body.results[0]?.snippet.length).toBeLessThanOrEqual(300);
  });

  it("web_fetch returns the page's Markdown with its title, after POST /v1/fetch with X-Trace-Id", async () => {
    const message = await invoke(await tool("web_fetch"), { url: "https://deer.example.org/antlers/1" });
    expect(message.status).toBe("success");
    expect(text(message)).toContain("Antlers are shed and regrown every year.");
    expect(sofya.requests[0]?.headers["x-trace-id"]).toMatch(/^\S+$/);
  });

  it("a page Sofya could not fetch becomes an error ToolMessage with Sofya's reason", async () => {
    const message = await invoke(await tool("web_fetch"), { url: "https://unreachable.example.org/" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("The page could not be loaded (HTTP 404)");
  });

  it("HTTP 401 and 403 become error ToolMessages naming SOFYA_API_KEY", async () => {
    const unauthorized = await invoke(await tool("web_search", { api_key: "wrong" }), { query: "q" });
    expect(unauthorized.status).toBe("error");
    expect(text(unauthorized)).toContain("HTTP 401");
    expect(text(unauthorized)).toContain("SOFYA_API_KEY");
    sofya.queue(sofyaError(403, "Plan does not include fetch"));
    const forbidden = await invoke(await tool("web_fetch"), { url: "https://deer.example.org/antlers/1" });
    expect(text(forbidden)).toContain("HTTP 403");
    expect(text(forbidden)).toContain("SOFYA_API_KEY");
  });

  it("a missing key becomes an error ToolMessage naming SOFYA_API_KEY, and Sofya is not called", async () => {
    vi.stubEnv("SOFYA_API_KEY", "");
    const message = await invoke(await tool("web_fetch", { api_key: undefined }), { url: "https://deer.example.org/" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("SOFYA_API_KEY is not set");
    expect(sofya.requests).toHaveLength(0);
  });

  it("a 429 with Retry-After is retried and the next answer is returned", async () => {
    sofya.queue({ ...sofyaError(429, "Rate limit exceeded"), headers: { "retry-after": "0" } });
    const message = await invoke(await tool("web_search"), { query: "antlers" });
    expect(message.status).toBe("success");
    expect(sofya.requests).toHaveLength(2);
  });

  it("a 503 on every try is reported after retry.attempts tries", async () => {
    const failure = sofyaError(503, "Service unavailable");
    sofya.queue(failure, failure, failure);
    const message = await invoke(await tool("web_fetch"), { url: "https://deer.example.org/antlers/1" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 503");
    expect(sofya.requests).toHaveLength(3);
  });

  it("a 200 that is not JSON becomes an error ToolMessage quoting its first bytes", async () => {
    sofya.queue({ status: 200, body: "Sofya is under maintenance", headers: { "content-type": "text/plain" } });
    const message = await invoke(await tool("web_search"), { query: "antlers" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("not JSON");
    expect(text(message)).toContain("under maintenance");
  });

  it("a Sofya that does not answer within timeout_seconds gives a timeout ToolMessage", async () => {
    sofya.queue({ status: 200, body: {}, delayMs: 5000 });
    const message = await invoke(await tool("web_search", {}, { timeout_seconds: 0.3 }), { query: "antlers" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("sofya did not answer within 0.3 s");
  });
});
