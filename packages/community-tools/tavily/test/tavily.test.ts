import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { type LoopbackServer, runWebToolConformance, startLoopbackServer, stubLookup, webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import tavilyPlugin from "../src/index.js";

const KEY = "tvly-test-0123456789";

// Realistic Tavily API answers (POST /search, POST /extract), as documented and as the SDK parses them.
const searchAnswer = (query: string, results: Array<Record<string, unknown>>, images: unknown[] = []) => ({
  query,
  follow_up_questions: null,
  answer: null,
  images,
  results,
  response_time: 1.09,
  request_id: "123e4567-e89b-12d3-a456-426614174111",
});
const extractAnswer = (results: Array<Record<string, unknown>>, failed: Array<Record<string, unknown>> = []) => ({
  results,
  failed_results: failed,
  response_time: 0.02,
  request_id: "123e4567-e89b-12d3-a456-426614174222",
});
const tavilyError = (_status: number, message: string) => ({ detail: { error: message } });

runWebToolConformance({
  provider: "tavily",
  apiKeyEnv: "TAVILY_API_KEY",
  plugins: (serverUrl) => [{ plugin: tavilyPlugin, config: { api_key: KEY, base_url: serverUrl } }],
  vendor: {
    search: (results, request) =>
      request.path === "/search"
        ? {
            body: searchAnswer(
              String((request.json as { query?: unknown }).query),
              results.map((r, i) => ({
                url: r.url,
                title: r.title,
                content: r.snippet,
                score: 0.9 - i * 0.05,
                raw_content: null,
                published_date: r.publishedAt,
              })),
            ),
          }
        : { status: 404, body: tavilyError(404, "Not Found") },
    images: (images, request) =>
      request.path === "/search"
        ? {
            body: searchAnswer(
              "q",
              [],
              images.map((img) => ({ url: img.imageUrl, description: img.title })),
            ),
          }
        : { status: 404, body: tavilyError(404, "Not Found") },
    fetch: (page, request) =>
      request.path === "/extract"
        ? { body: extractAnswer([{ url: page.url, title: page.title, raw_content: page.markdown, images: [] }]) }
        : { status: 404, body: tavilyError(404, "Not Found") },
    error: tavilyError,
  },
});

runPluginConformance(tavilyPlugin, {
  validConfig: { api_key: KEY },
  invalidConfigs: [{ base_url: "nope" }, { max_results: 21 }, { search_depth: "deep" }],
  dependencies: [createWebToolsPlugin()],
});

describe("@antler/tools-tavily through @tavily/core against a Tavily-shaped loopback server", () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startLoopbackServer();
  });
  afterEach(() => {
    server.requests.length = 0;
  });
  afterAll(() => server.close());

  const web = webToolsHarness({
    providerPlugin: tavilyPlugin,
    providerConfig: () => ({ api_key: KEY, base_url: server.url }),
    webOptions: { lookup: stubLookup() },
    webConfig: { search: "tavily", fetch: "tavily", images: "tavily", retry: { attempts: 1 } },
  });
  const tool = (name: string, config: Record<string, unknown> = {}) => web.caller(name, config);

  it("web_search POSTs /search with the Bearer key, the trace id and the configured search fields", async () => {
    server.setHandler(() => ({ body: searchAnswer("deer", []) }));
    const search = await tool("web_search", {
      search_depth: "advanced",
      topic: "news",
      time_range: "week",
      include_domains: ["nature.com"],
      exclude_domains: ["spam.example"],
    });
    await search({ query: "deer antler growth", max_results: 4 });
    expect(server.requests).toHaveLength(1);
    const request = server.requests[0]!;
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/search");
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request.headers["content-type"]).toMatch(/application\/json/);
    expect(request.headers["x-client-source"]).toBe("antler");
    expect(request.headers["x-trace-id"]).toEqual(expect.any(String));
    expect(request.json).toMatchObject({
      query: "deer antler growth",
      max_results: 4,
      search_depth: "advanced",
      topic: "news",
      time_range: "week",
      include_answer: false,
      include_raw_content: false,
      include_domains: ["nature.com"],
      exclude_domains: ["spam.example"],
    });
  });

  it("maps Tavily results (title, url, content, published_date) and caps snippets at max_snippet_chars", async () => {
    server.setHandler(() => ({
      body: searchAnswer("deer", [
        {
          url: "https://www.nature.com/articles/antlers",
          title: "Antler regeneration",
          content: "A".repeat(300),
          score: 0.98,
          raw_content: null,
          published_date: "Mon, 24 Nov 2026 10:00:00 GMT",
        },
        {
          url: "https://en.wikipedia.org/wiki/Antler",
          title: "Antler - Wikipedia",
          content: "Antlers are extensions of an animal's skull.",
          score: 0.91,
          raw_content: null,
        },
      ]),
    }));
    const message = await (await tool("web_search", { max_snippet_chars: 120 }))({ query: "deer" });
    expect(message.status).toBe("success");
    expect(JSON.parse(String(message.content)).results).toEqual([
      {
        title: "Antler regeneration",
        url: "https://www.nature.com/articles/antlers",
        snippet: `${"A".repeat(119)}…`,
        published_at: "Mon, 24 Nov 2026 10:00:00 GMT",
      },
      { title: "Antler - Wikipedia", url: "https://en.wikipedia.org/wiki/Antler", snippet: "Antlers are extensions of an animal's skull." },
    ]);
  });

  it("web_fetch POSTs /extract with the URL and format=markdown, and returns the Markdown", async () => {
    server.setHandler(() => ({
      body: extractAnswer([
        {
          url: "https://www.nature.com/articles/antlers",
          raw_content: "# Antler regeneration\n\nDeer regrow antlers every year.",
          images: [],
        },
      ]),
    }));
    const message = await (await tool("web_fetch", { extract_depth: "advanced" }))({ url: "https://www.nature.com/articles/antlers" });
    const request = server.requests[0]!;
    expect(request.path).toBe("/extract");
    expect(request.json).toMatchObject({
      urls: ["https://www.nature.com/articles/antlers"],
      format: "markdown",
      extract_depth: "advanced",
      include_images: false,
    });
    expect(message.status).toBe("success");
    expect(String(message.content)).toContain("URL: https://www.nature.com/articles/antlers");
    expect(String(message.content)).toContain("Deer regrow antlers every year.");
  });

  it("reports Tavily's failed_results for a page it could not extract", async () => {
    server.setHandler(() => ({ body: extractAnswer([], [{ url: "https://blocked.example/page", error: "Failed to fetch url" }]) }));
    const message = await (await tool("web_fetch"))({ url: "https://blocked.example/page" });
    expect(message.status).toBe("error");
    expect(String(message.content)).toContain("Tavily could not extract https://blocked.example/page: Failed to fetch url");
  });

  it("image_search asks for images with descriptions and maps them", async () => {
    server.setHandler(() => ({
      body: searchAnswer(
        "stag",
        [],
        [
          { url: "https://images.example/stag.jpg", description: "A red deer stag in the Highlands" },
          { url: "", description: "empty" },
        ],
      ),
    }));
    const message = await (await tool("image_search"))({ query: "stag" });
    expect(server.requests[0]?.json).toMatchObject({ include_images: true, include_image_descriptions: true });
    expect(JSON.parse(String(message.content)).results).toEqual([
      { title: "A red deer stag in the Highlands", image_url: "https://images.example/stag.jpg" },
    ]);
  });

  it("keeps the HTTP status the SDK drops: a Tavily 401 body names TAVILY_API_KEY", async () => {
    server.setHandler(() => ({ status: 401, body: tavilyError(401, "Unauthorized: missing or invalid API key.") }));
    const message = await (await tool("web_search"))({ query: "deer" });
    expect(message.status).toBe("error");
    expect(String(message.content)).toContain("tavily rejected the API key (HTTP 401)");
    expect(String(message.content)).toContain("TAVILY_API_KEY");
  });

  it("refuses to call Tavily without a key instead of falling into the SDK's keyless mode", async () => {
    const search = await tool("web_search", { api_key: undefined });
    const previous = process.env.TAVILY_API_KEY;
    delete process.env.TAVILY_API_KEY;
    try {
      const message = await search({ query: "deer" });
      expect(message.status).toBe("error");
      expect(String(message.content)).toContain("no API key: set the TAVILY_API_KEY environment variable");
      expect(server.requests).toHaveLength(0);
    } finally {
      if (previous !== undefined) process.env.TAVILY_API_KEY = previous;
    }
  });
});
