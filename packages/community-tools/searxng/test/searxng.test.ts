import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { type LoopbackServer, runWebToolConformance, startLoopbackServer, webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import searxngPlugin from "../src/index.js";

// A realistic answer of SearXNG's `/search?format=json`, trimmed to two results.
function searxngAnswer(query: string, results: Array<Record<string, unknown>>) {
  return {
    query,
    number_of_results: 0,
    results,
    answers: [],
    corrections: [],
    infoboxes: [],
    suggestions: ["antler velvet", "antler shedding season"],
    unresponsive_engines: [["brave", "too many requests"]],
  };
}

runWebToolConformance({
  provider: "searxng",
  plugins: (serverUrl) => [{ plugin: searxngPlugin, config: { base_url: serverUrl } }],
  vendor: {
    search: (results, request) => ({
      body: searxngAnswer(
        request.query.get("q") ?? "",
        results.map((r, i) => ({
          url: r.url,
          title: r.title,
          content: r.snippet,
          engine: "duckduckgo",
          engines: ["duckduckgo", "bing"],
          positions: [i + 1],
          score: 4 - i * 0.1,
          category: "general",
          publishedDate: r.publishedAt,
          parsed_url: ["https", new URL(r.url).host, new URL(r.url).pathname, "", "", ""],
          template: "default.html",
        })),
      ),
    }),
    images: (images, request) => ({
      body: searxngAnswer(
        request.query.get("q") ?? "",
        images.map((img) => ({
          url: img.sourceUrl,
          title: img.title,
          content: "",
          img_src: img.imageUrl,
          thumbnail_src: img.thumbnailUrl,
          resolution: `${img.width} x ${img.height}`,
          img_format: "jpeg",
          engine: "bing images",
          category: "images",
          template: "images.html",
        })),
      ),
    }),
  },
});

runPluginConformance(searxngPlugin, {
  validConfig: { base_url: "http://127.0.0.1:8088" },
  invalidConfigs: [{ base_url: "not a url" }, { safesearch: 3 }, { max_results: 0 }],
  dependencies: [createWebToolsPlugin()],
});

describe("@antler/tools-searxng against a SearXNG-shaped loopback server", () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startLoopbackServer();
  });
  afterEach(() => {
    server.requests.length = 0;
  });
  afterAll(() => server.close());

  const web = webToolsHarness({
    providerPlugin: searxngPlugin,
    providerConfig: () => ({ base_url: `${server.url}/searx/` }),
    webConfig: { search: "searxng", images: "searxng", retry: { attempts: 1 } },
  });
  const tool = (name: string, config: Record<string, unknown> = {}) => web.caller(name, config);

  it("sends GET {base_url}/search with q, format=json and the configured categories, engines, language, safesearch and time_range", async () => {
    server.setHandler(() => ({ body: searxngAnswer("q", []) }));
    const search = await tool("web_search", {
      categories: ["general", "science"],
      engines: ["duckduckgo", "wikipedia"],
      language: "en",
      safesearch: 1,
      time_range: "month",
      headers: { authorization: "Bearer proxy-token" },
    });
    await search({ query: "red deer antlers" });
    expect(server.requests).toHaveLength(1);
    const request = server.requests[0]!;
    expect(request.method).toBe("GET");
    expect(request.path).toBe("/searx/search");
    expect(Object.fromEntries(request.query)).toEqual({
      q: "red deer antlers",
      format: "json",
      pageno: "1",
      categories: "general,science",
      engines: "duckduckgo,wikipedia",
      language: "en",
      safesearch: "1",
      time_range: "month",
    });
    expect(request.headers.authorization).toBe("Bearer proxy-token");
    expect(request.headers["x-trace-id"]).toEqual(expect.any(String));
  });

  it("maps url, title, content and publishedDate, skips results without a url, and caps snippets at max_snippet_chars", async () => {
    server.setHandler(() => ({
      body: searxngAnswer("deer", [
        {
          title: "Deer - Wikipedia",
          url: "https://en.wikipedia.org/wiki/Deer",
          content: "D".repeat(500),
          publishedDate: "2025-01-02T00:00:00",
        },
        { title: "No URL", content: "dropped" },
        { title: "", url: "https://example.org/untitled", content: null },
      ]),
    }));
    const search = await tool("web_search", { max_snippet_chars: 100 });
    const message = await search({ query: "deer" });
    const body = JSON.parse(String(message.content));
    expect(body.results).toEqual([
      {
        title: "Deer - Wikipedia",
        url: "https://en.wikipedia.org/wiki/Deer",
        snippet: `${"D".repeat(99)}…`,
        published_at: "2025-01-02T00:00:00",
      },
      { title: "https://example.org/untitled", url: "https://example.org/untitled", snippet: "" },
    ]);
  });

  it("asks the image categories for image_search and maps img_src, thumbnail_src and resolution", async () => {
    server.setHandler(() => ({
      body: searxngAnswer("stag", [
        {
          url: "https://photos.example/stag",
          title: "Stag",
          img_src: "https://img.example/stag.jpg",
          thumbnail_src: "https://img.example/t.jpg",
          resolution: "1920 x 1080",
        },
        { url: "https://photos.example/text-only", title: "No image" },
      ]),
    }));
    const images = await tool("image_search");
    const message = await images({ query: "stag" });
    expect(server.requests[0]?.query.get("categories")).toBe("images");
    expect(JSON.parse(String(message.content)).results).toEqual([
      {
        title: "Stag",
        image_url: "https://img.example/stag.jpg",
        thumbnail_url: "https://img.example/t.jpg",
        source_url: "https://photos.example/stag",
        width: 1920,
        height: 1080,
      },
    ]);
  });

  it("explains a 403 as the JSON format being disabled in settings.yml", async () => {
    server.setHandler(() => ({ status: 403, body: "<html>403 Forbidden</html>", headers: { "content-type": "text/html" } }));
    const message = await (await tool("web_search"))({ query: "deer" });
    expect(message.status).toBe("error");
    expect(String(message.content)).toContain("refused format=json (HTTP 403)");
    expect(String(message.content)).toContain("search.formats");
  });

  it("says so when base_url answers something that is not SearXNG JSON", async () => {
    server.setHandler(() => ({ body: "<html>welcome to nginx</html>", headers: { "content-type": "text/html" } }));
    const message = await (await tool("web_search"))({ query: "deer" });
    expect(message.status).toBe("error");
    expect(String(message.content)).toMatch(/did not answer JSON .* is base_url a SearXNG instance\?/);
  });

  it("reports an unreachable instance as an error ToolMessage", async () => {
    const dead = await startLoopbackServer();
    const deadUrl = dead.url;
    await dead.close();
    const message = await (await tool("web_search", { base_url: deadUrl }))({ query: "deer" });
    expect(message.status).toBe("error");
    // Reported with the code (this kernel retries nothing: retry.attempts is 1).
    expect(String(message.content)).toMatch(/^web_search failed: the connection to searxng broke \(ECONNREFUSED\)\./);
  });
});
