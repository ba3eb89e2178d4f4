import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { stubLookup, webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import exaToolsPlugin from "../src/index.js";
import { exaError, type FakeExa, startFakeExa } from "./fake-exa.js";

const KEY = "exa-tools-key";

describe("Exa through @antler/tools-web's tools", () => {
  let exa: FakeExa;
  beforeAll(async () => {
    exa = await startFakeExa(KEY);
  });
  afterAll(() => exa.close());
  beforeEach(() => {
    exa.requests.length = 0;
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
  });

  const { tool, invoke } = webToolsHarness({
    providerPlugin: exaToolsPlugin,
    providerConfig: () => ({ api_key: KEY, base_url: exa.baseUrl }),
    // The stub resolver answers public addresses for the example hosts web_fetch is asked for.
    webOptions: { sleep: async () => {}, lookup: stubLookup() },
    webConfig: { search: "exa", fetch: "exa", images: null, retry: { attempts: 3, initial_delay_ms: 1, max_delay_ms: 5000 } },
  });
  const text = (m: { content: unknown }) => String(m.content);

  it("web_search returns Exa's results with highlights as snippets, after POST /search with x-api-key", async () => {
    const message = await invoke(await tool("web_search"), { query: "llm agents", max_results: 2 });
    expect(message.status).toBe("success");
    const body = JSON.parse(text(message)) as { results: Array<Record<string, string>> };
    expect(body.results.map((r) => r.url)).toEqual([
      "https://arxiv.org/abs/2307.06435",
      "https://lilianweng.github.io/posts/2023-06-23-agent/",
    ]);
    expect(body.results[0]?.snippet).toContain("remarkable capabilities in natural language processing tasks. … This article");
    expect(exa.requests[0]?.path).toBe("/search");
    expect(exa.requests[0]?.headers["x-api-key"]).toBe(KEY);
    expect(exa.bodies()[0]).toMatchObject({ query: "llm agents", numResults: 2, type: "auto" });
    expect(exa.requests[0]?.headers["x-trace-id"]).toMatch(/^\S+$/);
  });

  it("web_fetch returns the page Markdown from /contents with its title and URL", async () => {
    const url = "https://blog.example.com/posts/agents";
    const message = await invoke(await tool("web_fetch"), { url });
    expect(message.status).toBe("success");
    expect(text(message)).toContain("LLM Powered Autonomous Agents");
    expect(text(message)).toContain("Agents | Lil'Log");
    expect(text(message)).toContain(url);
    expect(exa.bodies()[0]).toEqual({ urls: [url], text: { maxCharacters: 20_000 } });
  });

  it("web_fetch reports a page Exa could not crawl with Exa's reason", async () => {
    const message = await invoke(await tool("web_fetch"), { url: "https://blog.example.com/missing" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("CRAWL_NOT_FOUND (the page answered HTTP 404)");
    expect(text(message)).not.toContain("EXA_API_KEY");
  });

  it("Exa's 401 for a wrong key becomes an error ToolMessage naming EXA_API_KEY", async () => {
    const message = await invoke(await tool("web_search", { api_key: "wrong" }), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 401");
    expect(text(message)).toContain("key is missing or wrong");
    expect(text(message)).toContain("EXA_API_KEY");
  });

  it("a missing key becomes an error ToolMessage naming EXA_API_KEY, and Exa is not called", async () => {
    vi.stubEnv("EXA_API_KEY", "");
    const message = await invoke(await tool("web_fetch", { api_key: undefined }), { url: "https://blog.example.com/x" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("EXA_API_KEY is not set");
    expect(exa.requests).toHaveLength(0);
  });

  it("a 429 is retried and the next answer is returned", async () => {
    exa.queue({ ...exaError(429, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded"), headers: { "retry-after": "0" } });
    const message = await invoke(await tool("web_search"), { query: "llm" });
    expect(message.status).toBe("success");
    expect(exa.requests).toHaveLength(2);
  });

  it("a 503 on every try is reported after retry.attempts tries", async () => {
    const failure = exaError(503, "SERVICE_UNAVAILABLE", "Service temporarily unavailable");
    exa.queue(failure, failure, failure);
    const message = await invoke(await tool("web_fetch"), { url: "https://blog.example.com/x" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 503");
    expect(exa.requests).toHaveLength(3);
  });

  it("an Exa that does not answer within timeout_seconds gives a timeout ToolMessage", async () => {
    exa.queue({ status: 200, body: {}, delayMs: 5000 });
    const message = await invoke(await tool("web_search", {}, { timeout_seconds: 0.3 }), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("exa did not answer within 0.3 s");
  });
});

runPluginConformance(exaToolsPlugin, {
  validConfig: { api_key: "k", search_type: "neural", include_domains: ["arxiv.org"] },
  invalidConfigs: [
    { search_type: "semantic" },
    { snippet_source: "summary" },
    { include_domains: ["not a domain"] },
    { fetch_max_chars: 10 },
  ],
  dependencies: [createWebToolsPlugin()],
});
