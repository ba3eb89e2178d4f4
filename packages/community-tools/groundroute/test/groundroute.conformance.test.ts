import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { type LoopbackReply, type RecordedHttpRequest, runWebToolConformance } from "@antler/tools-web/testing";
import groundrouteToolsPlugin from "../src/index.js";

const KEY = "gr_conformance";

/** The request must be what GroundRoute expects, or the fake refuses it (and the kit's checks fail). */
function refuse(request: RecordedHttpRequest): LoopbackReply | undefined {
  if (request.method !== "POST" || request.path !== "/v1/search") return { status: 404, body: { error: { message: "not found" } } };
  if (request.headers.authorization !== `Bearer ${KEY}`) return { status: 401, body: { error: { message: "invalid API key" } } };
  return undefined;
}

runWebToolConformance({
  provider: "groundroute",
  apiKeyEnv: "GROUNDROUTE_API_KEY",
  plugins: (serverUrl) => [{ plugin: groundrouteToolsPlugin, config: { api_key: KEY, base_url: serverUrl } }],
  vendor: {
    search(results, request) {
      const refused = refuse(request);
      if (refused) return refused;
      const body = request.json as { query?: unknown; max_results?: unknown; mode?: unknown };
      if (typeof body.query !== "string" || typeof body.max_results !== "number" || body.mode !== "auto")
        return { status: 422, body: { error: { message: "bad body" } } };
      return {
        status: 200,
        body: {
          results: results.slice(0, body.max_results).map((r) => ({
            url: r.url,
            title: r.title,
            snippet: r.snippet,
            content: null,
            source_engine: "brave",
            published_at: r.publishedAt,
          })),
          request_id: "req_conf",
        },
      };
    },
    fetch(page, request) {
      const refused = refuse(request);
      if (refused) return refused;
      const body = request.json as { query?: unknown; mode?: unknown; max_results?: unknown };
      if (body.query !== page.url || body.mode !== "page" || body.max_results !== 1)
        return { status: 422, body: { error: { message: "bad body" } } };
      return {
        status: 200,
        body: {
          results: [{ url: page.url, title: page.title, snippet: "", content: page.markdown, source_engine: "firecrawl" }],
          request_id: "req_conf",
        },
      };
    },
    error: (status, message) => ({ error: { message, status } }),
  },
});

runPluginConformance(groundrouteToolsPlugin, {
  validConfig: { api_key: "k", max_results: 50, mode: "news", freshness: "fresh", domains: ["arxiv.org"], country: "us" },
  invalidConfigs: [{ base_url: "not a url" }, { max_results: 51 }, { mode: "page" }, { freshness: "hot" }, { country: "USA" }],
  dependencies: [createWebToolsPlugin()],
});
