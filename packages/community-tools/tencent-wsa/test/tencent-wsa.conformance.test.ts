import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { runWebToolConformance } from "@antler/tools-web/testing";
import tencentWsaToolsPlugin from "../src/index.js";
import { tencentSearchBody } from "./fake-tencent-wsa.js";

const KEY = "wsa-conformance-key";

runWebToolConformance({
  provider: "tencent-wsa",
  apiKeyEnv: "TENCENTCLOUD_WSA_APIKEY",
  plugins: (serverUrl) => [{ plugin: tencentWsaToolsPlugin, config: { api_key: KEY, base_url: serverUrl } }],
  vendor: {
    // The request must be what SearchPro expects, or the fake refuses it (and the kit's checks fail).
    search(results, request) {
      if (request.method !== "POST" || request.path !== "/SearchPro") return { status: 404, body: "404 page not found" };
      const body = request.json as { Query?: unknown; Cnt?: unknown } | undefined;
      if (request.headers.authorization !== `Bearer ${KEY}` || typeof body?.Query !== "string" || body.Cnt !== undefined) {
        return { status: 400, body: { Response: { Error: { Code: "InvalidParameter", Message: "bad request" }, RequestId: "r" } } };
      }
      const pages = results.map((r) => ({ title: r.title, url: r.url, passage: r.snippet, date: r.publishedAt, site: "example" }));
      return { status: 200, body: tencentSearchBody(body.Query, pages.slice(0, 10)) };
    },
    error: (_status, message) => ({ message }),
  },
});

runPluginConformance(tencentWsaToolsPlugin, {
  validConfig: { api_key: "k", max_results: 50, mode: 0, site: "qq.com", industry: "acad" },
  invalidConfigs: [{ base_url: "not a url" }, { max_results: 51 }, { max_results: 0 }, { mode: 3 }, { industry: "sports" }],
  dependencies: [createWebToolsPlugin()],
});
