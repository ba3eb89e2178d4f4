import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { runWebToolConformance } from "@antler/tools-web/testing";
import crawl4aiToolsPlugin from "../src/index.js";

const TOKEN = "c4a-conformance-token";

runWebToolConformance({
  provider: "crawl4ai",
  apiKeyEnv: "CRAWL4AI_API_TOKEN",
  plugins: (serverUrl) => [{ plugin: crawl4aiToolsPlugin, config: { api_key: TOKEN, base_url: serverUrl } }],
  vendor: {
    // The request must be what Crawl4AI's /md expects, or the fake refuses it (and the kit's checks fail).
    fetch(page, request) {
      if (request.method !== "POST" || request.path !== "/md") return { status: 404, body: { detail: "Not Found" } };
      if (request.headers.authorization !== `Bearer ${TOKEN}`) return { status: 401, body: { detail: "Invalid or missing token" } };
      const body = request.json as { url?: unknown; f?: unknown };
      if (body.url !== page.url || body.f !== "fit") return { status: 422, body: { detail: "bad body" } };
      return { status: 200, body: { url: page.url, filter: "fit", query: null, cache: "0", markdown: page.markdown, success: true } };
    },
    error: (_status, message) => ({ detail: message }),
  },
});

runPluginConformance(crawl4aiToolsPlugin, {
  validConfig: { base_url: "http://crawl4ai:11235", filter: "bm25", query: "antlers", bypass_cache: true },
  invalidConfigs: [{ base_url: "not a url" }, { filter: "markdown" }, { filter: "llm" }, { max_content_chars: 10 }],
  dependencies: [createWebToolsPlugin()],
});
