import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { type LoopbackReply, type RecordedHttpRequest, runWebToolConformance } from "@antler/tools-web/testing";
import fastcrwToolsPlugin from "../src/index.js";

const KEY = "crw_live_conformance";

/** The request must be what fastCRW expects, or the fake refuses it (and the kit's checks fail). */
function refuse(request: RecordedHttpRequest, path: string): LoopbackReply | undefined {
  if (request.method !== "POST" || request.path !== path) return { status: 404, body: { success: false, error: "not found" } };
  if (request.headers.authorization !== `Bearer ${KEY}`)
    return { status: 401, body: { success: false, error: "Missing or invalid API key" } };
  return undefined;
}

runWebToolConformance({
  provider: "fastcrw",
  apiKeyEnv: "CRW_API_KEY",
  plugins: (serverUrl) => [{ plugin: fastcrwToolsPlugin, config: { api_key: KEY, base_url: serverUrl } }],
  vendor: {
    search(results, request) {
      const refused = refuse(request, "/v1/search");
      if (refused) return refused;
      const { query, limit } = request.json as { query?: unknown; limit?: unknown };
      if (typeof query !== "string" || typeof limit !== "number") return { status: 400, body: { success: false, error: "bad body" } };
      return {
        status: 200,
        body: {
          success: true,
          data: results
            .slice(0, limit)
            .map((r, i) => ({ url: r.url, title: r.title, snippet: r.snippet, description: r.snippet, position: i + 1 })),
        },
      };
    },
    fetch(page, request) {
      const refused = refuse(request, "/v1/scrape");
      if (refused) return refused;
      const body = request.json as { url?: unknown; formats?: unknown };
      if (body.url !== page.url || JSON.stringify(body.formats) !== '["markdown"]')
        return { status: 400, body: { success: false, error: "bad body" } };
      return {
        status: 200,
        body: { success: true, data: { markdown: page.markdown, metadata: { title: page.title, sourceURL: page.url, statusCode: 200 } } },
      };
    },
    error: (_status, message) => ({ success: false, error: message }),
  },
});

runPluginConformance(fastcrwToolsPlugin, {
  validConfig: { base_url: "http://localhost:3000", max_results: 20, lang: "en", tbs: "qdr:d", render_js: false },
  invalidConfigs: [{ base_url: "not a url" }, { max_results: 21 }, { tbs: "qdr:x" }, { deadline_ms: 60_001 }],
  dependencies: [createWebToolsPlugin()],
});
