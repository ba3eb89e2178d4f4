import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { type LoopbackServer, runWebToolConformance, startLoopbackServer, stubLookup, webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import firecrawlPlugin from "../src/index.js";

const KEY = "fc-test-0123456789abcdef";

// Firecrawl API v2 answers, as the v4 SDK parses them.
const searchAnswer = (data: Record<string, unknown>) => ({ success: true, data, creditsUsed: 1, id: "0195-search-id" });
const scrapeAnswer = (markdown: string, metadata: Record<string, unknown>) => ({ success: true, data: { markdown, metadata } });
const firecrawlError = (_status: number, message: string) => ({ success: false, error: message });

runWebToolConformance({
  provider: "firecrawl",
  apiKeyEnv: "FIRECRAWL_API_KEY",
  plugins: (serverUrl) => [{ plugin: firecrawlPlugin, config: { api_key: KEY, base_url: serverUrl } }],
  vendor: {
    search: (results, request) =>
      request.path === "/v2/search"
        ? { body: searchAnswer({ web: results.map((r, i) => ({ url: r.url, title: r.title, description: r.snippet, position: i + 1 })) }) }
        : { status: 404, body: firecrawlError(404, "Not found") },
    images: (images, request) =>
      request.path === "/v2/search"
        ? {
            body: searchAnswer({
              images: images.map((img, i) => ({
                title: img.title,
                imageUrl: img.imageUrl,
                imageWidth: img.width,
                imageHeight: img.height,
                url: img.sourceUrl,
                position: i + 1,
              })),
            }),
          }
        : { status: 404, body: firecrawlError(404, "Not found") },
    fetch: (page, request) =>
      request.path === "/v2/scrape"
        ? {
            body: scrapeAnswer(page.markdown, {
              title: page.title,
              sourceURL: page.url,
              url: page.url,
              statusCode: 200,
              contentType: "text/html",
              scrapeId: "s-1",
              creditsUsed: 1,
            }),
          }
        : { status: 404, body: firecrawlError(404, "Not found") },
    error: firecrawlError,
  },
});

runPluginConformance(firecrawlPlugin, {
  validConfig: { api_key: KEY },
  invalidConfigs: [{ base_url: "nope" }, { country: "USA" }, { max_results: 0 }],
  dependencies: [createWebToolsPlugin()],
});

describe("@antler/tools-firecrawl through @mendable/firecrawl-js 4.42.0 against a Firecrawl-shaped loopback server", () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startLoopbackServer();
  });
  afterEach(() => {
    server.requests.length = 0;
  });
  afterAll(() => server.close());

  const web = webToolsHarness({
    providerPlugin: firecrawlPlugin,
    providerConfig: () => ({ api_key: KEY, base_url: server.url }),
    webOptions: { lookup: stubLookup(), sleep: async () => {} },
    webConfig: { search: "firecrawl", fetch: "firecrawl", images: "firecrawl", retry: { attempts: 1 } },
  });
  const tool = web.caller;

  it("web_search POSTs /v2/search with the Bearer key, the trace id, limit, sources and the configured filters", async () => {
    server.setHandler(() => ({ body: searchAnswer({ web: [] }) }));
    await (await tool("web_search", { country: "DE", tbs: "qdr:w", include_domains: ["nature.com"] }))({
      query: "deer antlers",
      max_results: 4,
    });
    expect(server.requests).toHaveLength(1);
    const request = server.requests[0]!;
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/v2/search");
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request.headers["x-trace-id"]).toEqual(expect.any(String));
    expect(request.json).toMatchObject({
      query: "deer antlers",
      limit: 4,
      sources: ["web"],
      country: "DE",
      tbs: "qdr:w",
      includeDomains: ["nature.com"],
      timeout: 60000,
      origin: "js-sdk@4.42.0",
    });
  });

  it("maps web results (url, title, description) and caps snippets at max_snippet_chars", async () => {
    server.setHandler(() => ({
      body: searchAnswer({
        web: [
          { url: "https://www.nature.com/articles/antlers", title: "Antler regeneration", description: "B".repeat(400), position: 1 },
          { url: "https://en.wikipedia.org/wiki/Antler", title: "", description: "Antlers are extensions of the skull.", position: 2 },
        ],
      }),
    }));
    const message = await (await tool("web_search", { max_snippet_chars: 100 }))({ query: "deer" });
    expect(JSON.parse(String(message.content)).results).toEqual([
      { title: "Antler regeneration", url: "https://www.nature.com/articles/antlers", snippet: `${"B".repeat(99)}…` },
      {
        title: "https://en.wikipedia.org/wiki/Antler",
        url: "https://en.wikipedia.org/wiki/Antler",
        snippet: "Antlers are extensions of the skull.",
      },
    ]);
  });

  it("web_fetch POSTs /v2/scrape for Markdown of the main content and returns it with the page title", async () => {
    server.setHandler(() => ({
      body: scrapeAnswer("# Antler regeneration\n\nDeer regrow antlers every year.", {
        title: "Antler regeneration | Nature",
        sourceURL: "https://www.nature.com/articles/antlers",
        url: "https://www.nature.com/articles/antlers?utm=x",
        statusCode: 200,
      }),
    }));
    const message = await (await tool("web_fetch", { max_age_ms: 3600000 }))({ url: "https://www.nature.com/articles/antlers" });
    const request = server.requests[0]!;
    expect(request.path).toBe("/v2/scrape");
    expect(request.json).toMatchObject({
      url: "https://www.nature.com/articles/antlers",
      formats: ["markdown"],
      onlyMainContent: true,
      maxAge: 3600000,
      timeout: 60000,
    });
    expect(request.json).not.toHaveProperty("autoResume");
    expect(message.status).toBe("success");
    expect(String(message.content)).toContain("# Antler regeneration | Nature");
    expect(String(message.content)).toContain("URL: https://www.nature.com/articles/antlers?utm=x");
    expect(String(message.content)).toContain("Deer regrow antlers every year.");
  });

  it("reports a page Firecrawl reached but that answered 404", async () => {
    server.setHandler(() => ({
      body: scrapeAnswer("Not found", { sourceURL: "https://example.org/gone", statusCode: 404, error: "Not Found" }),
    }));
    const message = await (await tool("web_fetch"))({ url: "https://example.org/gone" });
    expect(message.status).toBe("error");
    expect(String(message.content)).toContain("the page answered HTTP 404 (Not Found)");
  });

  it("image_search asks for the images source and maps imageUrl, size and page", async () => {
    server.setHandler(() => ({
      body: searchAnswer({
        images: [
          {
            title: "Stag",
            imageUrl: "https://img.example/stag.jpg",
            imageWidth: 640,
            imageHeight: 480,
            url: "https://photos.example/stag",
            position: 1,
          },
        ],
      }),
    }));
    const message = await (await tool("image_search"))({ query: "stag" });
    expect(server.requests[0]?.json).toMatchObject({ sources: ["images"] });
    expect(JSON.parse(String(message.content)).results).toEqual([
      { title: "Stag", image_url: "https://img.example/stag.jpg", source_url: "https://photos.example/stag", width: 640, height: 480 },
    ]);
  });

  it("honours Firecrawl's Retry-After on 429 and does not retry 5xx twice over (SDK retries off)", async () => {
    let calls = 0;
    server.setHandler(() => {
      calls++;
      return calls === 1
        ? {
            status: 429,
            body: firecrawlError(429, "Rate limit exceeded. Consumed (req/min): 11, Remaining (req/min): 0."),
            headers: { "retry-after": "0" },
          }
        : { status: 502, body: firecrawlError(502, "Bad gateway") };
    });
    const message = await (await tool("web_search", {}, { retry: { attempts: 3, initial_delay_ms: 1 } }))({ query: "deer" });
    expect(message.status).toBe("error");
    expect(String(message.content)).toContain("had a server error (HTTP 502) after 3 tries");
    expect(server.requests).toHaveLength(3);
  });

  it("a self-hosted base_url needs no key and sends no Authorization header", async () => {
    server.setHandler(() => ({ body: searchAnswer({ web: [] }) }));
    const search = await tool("web_search", { api_key: undefined });
    const previous = process.env.FIRECRAWL_API_KEY;
    delete process.env.FIRECRAWL_API_KEY;
    try {
      const message = await search({ query: "deer" });
      expect(message.status).toBe("success");
      expect(server.requests[0]?.headers.authorization).toBeUndefined();
    } finally {
      if (previous !== undefined) process.env.FIRECRAWL_API_KEY = previous;
    }
  });
});
