import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { type LoopbackReply, type RecordedHttpRequest, runWebToolConformance } from "@antler/tools-web/testing";
import sofyaToolsPlugin from "../src/index.js";

const KEY = "ay_live_conformance";

/** The request must be what Sofya expects, or the fake refuses it (and the kit's checks fail). */
function refuse(request: RecordedHttpRequest, path: string): LoopbackReply | undefined {
  if (request.method !== "POST" || request.path !== path) return { status: 404, body: { error: "Not found" } };
  if (request.headers.authorization !== `Bearer ${KEY}`) return { status: 401, body: { error: "Invalid API key" } };
  return undefined;
}

runWebToolConformance({
  provider: "sofya",
  apiKeyEnv: "SOFYA_API_KEY",
  plugins: (serverUrl) => [{ plugin: sofyaToolsPlugin, config: { api_key: KEY, base_url: `${serverUrl}/v1` } }],
  vendor: {
    search(results, request) {
      const refused = refuse(request, "/v1/search");
      if (refused) return refused;
      const body = request.json as { query?: unknown; max_results?: unknown };
      if (typeof body.query !== "string" || typeof body.max_results !== "number") return { status: 400, body: { error: "bad body" } };
      return {
        status: 200,
        body: {
          query: body.query,
          results: results
            .slice(0, body.max_results)
            .map((r) => ({ title: r.title, url: r.url, description: r.snippet, content: r.snippet, published_date: r.publishedAt })),
        },
      };
    },
    fetch(page, request) {
      const refused = refuse(request, "/v1/fetch");
      if (refused) return refused;
      const urls = (request.json as { urls?: unknown }).urls;
      if (!Array.isArray(urls) || urls[0] !== page.url) return { status: 400, body: { error: "bad urls" } };
      return { status: 200, body: { results: [{ url: page.url, title: page.title, content: page.markdown, success: true }] } };
    },
    error: (_status, message) => ({ error: message }),
  },
});

runPluginConformance(sofyaToolsPlugin, {
  validConfig: { api_key: "k", max_results: 20, search_depth: "snippets", freshness: "day", include_domains: ["nps.gov"] },
  invalidConfigs: [
    { base_url: "not a url" },
    { max_results: 21 },
    { search_depth: "deep" },
    { max_content_chars: 10 },
    { freshness: "hour" },
  ],
  dependencies: [createWebToolsPlugin()],
});
