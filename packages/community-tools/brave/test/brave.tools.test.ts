import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import braveToolsPlugin from "../src/index.js";
import { BRAVE_QUOTA_EXHAUSTED, BRAVE_RATE_LIMITED, type FakeBrave, startFakeBrave } from "./fake-brave.js";

const TOKEN = "BSA-tools-token";

describe("Brave through @antler/tools-web's tools", () => {
  let brave: FakeBrave;
  beforeAll(async () => {
    brave = await startFakeBrave(TOKEN);
  });
  afterAll(() => brave.close());
  beforeEach(() => {
    brave.requests.length = 0;
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
  });

  const { tool, invoke } = webToolsHarness({
    providerPlugin: braveToolsPlugin,
    providerConfig: () => ({ api_key: TOKEN, base_url: brave.baseUrl }),
    webOptions: { sleep: async () => {} },
    webConfig: { search: "brave", images: "brave", fetch: null, retry: { attempts: 3, initial_delay_ms: 1, max_delay_ms: 5000 } },
  });
  const text = (m: { content: unknown }) => String(m.content);

  it("web_search returns Brave's results as plain text with the request Brave expects", async () => {
    const message = await invoke(await tool("web_search"), { query: "node streams", max_results: 2 });
    expect(message.status).toBe("success");
    const body = JSON.parse(text(message)) as { results: Array<Record<string, string>> };
    expect(body.results).toEqual([
      expect.objectContaining({
        title: "Stream | Node.js v20.19.0 Documentation",
        url: "https://nodejs.org/api/stream.html",
        published_at: "2025-02-10T00:00:00",
      }),
      expect.objectContaining({ title: "Node.js Streams: Everything you need to know '2024'" }),
    ]);
    expect(body.results[0]?.snippet).toMatch(/^A stream is an abstract interface/);
    expect(brave.requests).toHaveLength(1);
    expect(brave.requests[0]?.path).toBe("/res/v1/web/search");
    expect(brave.requests[0]?.headers["x-subscription-token"]).toBe(TOKEN);
    expect(brave.requests[0]?.query.get("count")).toBe("2");
    expect(brave.requests[0]?.headers["x-trace-id"]).toMatch(/^\S+$/);
  });

  it("image_search returns image, thumbnail and page URLs", async () => {
    const message = await invoke(await tool("image_search"), { query: "red fox", max_results: 5 });
    expect(message.status).toBe("success");
    const body = JSON.parse(text(message)) as { results: Array<Record<string, unknown>> };
    expect(body.results[0]).toEqual({
      title: "Red fox in the snow - Wikimedia Commons",
      image_url: "https://upload.wikimedia.org/wikipedia/commons/a/a1/Vulpes_vulpes_snow.jpg",
      thumbnail_url: "https://imgs.search.brave.com/thumb-fox.jpg",
      source_url: "https://commons.wikimedia.org/wiki/File:Vulpes_vulpes_snow.jpg",
      width: 4000,
      height: 2667,
    });
    expect(brave.requests[0]?.path).toBe("/res/v1/images/search");
  });

  it("Brave's 401 for a wrong token becomes an error ToolMessage naming BRAVE_SEARCH_API_KEY", async () => {
    const message = await invoke(await tool("web_search", { api_key: "BSA-wrong" }), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 401");
    expect(text(message)).toContain("key is missing or wrong");
    expect(text(message)).toContain("BRAVE_SEARCH_API_KEY");
    expect(brave.requests).toHaveLength(1);
  });

  it("a missing key becomes an error ToolMessage naming BRAVE_SEARCH_API_KEY, and Brave is not called", async () => {
    vi.stubEnv("BRAVE_SEARCH_API_KEY", "");
    const message = await invoke(await tool("web_search", { api_key: undefined }), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("BRAVE_SEARCH_API_KEY is not set");
    expect(brave.requests).toHaveLength(0);
  });

  it("reads the key from BRAVE_SEARCH_API_KEY when api_key is not configured", async () => {
    vi.stubEnv("BRAVE_SEARCH_API_KEY", TOKEN);
    const message = await invoke(await tool("web_search", { api_key: undefined }), { query: "q" });
    expect(message.status).toBe("success");
    expect(brave.requests[0]?.headers["x-subscription-token"]).toBe(TOKEN);
  });

  it("Brave's rate limit (429 RATE_LIMITED) is retried and the next answer is returned", async () => {
    brave.queue(BRAVE_RATE_LIMITED);
    const message = await invoke(await tool("web_search"), { query: "node streams" });
    expect(message.status).toBe("success");
    expect(brave.requests).toHaveLength(2);
  });

  it("an exhausted monthly quota is reported at once with Brave's wait, not retried", async () => {
    brave.queue(BRAVE_QUOTA_EXHAUSTED);
    const message = await invoke(await tool("web_search"), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("brave is rate limiting (HTTP 429)");
    expect(text(message)).toContain("asked to wait 1419704 s");
    expect(brave.requests).toHaveLength(1);
  });

  it("a 502 on every try is reported after retry.attempts tries", async () => {
    const failure = { status: 502, body: "<html><body>502 Bad Gateway</body></html>" };
    brave.queue(failure, failure, failure);
    const message = await invoke(await tool("web_search"), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 502");
    expect(text(message)).toContain("after 3 tries");
    expect(brave.requests).toHaveLength(3);
  });

  it("a Brave that does not answer within timeout_seconds gives a timeout ToolMessage", async () => {
    brave.queue({ status: 200, body: {}, delayMs: 5000 });
    const message = await invoke(await tool("web_search", {}, { timeout_seconds: 0.3 }), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("brave did not answer within 0.3 s");
  });
});

runPluginConformance(braveToolsPlugin, {
  validConfig: { api_key: "BSA-x", max_results: 5, safesearch: "off" },
  invalidConfigs: [{ base_url: "ftp://example.com" }, { max_results: 0 }, { safesearch: "sometimes" }, { country: "Germany" }],
  dependencies: [createWebToolsPlugin()],
});
