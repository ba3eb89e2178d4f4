import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { runWebToolConformance } from "@antler/tools-web/testing";
import serplyToolsPlugin from "../src/index.js";
import { serplyParams } from "./fake-serply.js";

const KEY = "serply-conformance-key";

runWebToolConformance({
  provider: "serply",
  apiKeyEnv: "SERPLY_API_KEY",
  plugins: (serverUrl) => [{ plugin: serplyToolsPlugin, config: { api_key: KEY, base_url: `${serverUrl}/v1` } }],
  vendor: {
    // The request must be what Serply expects, or the fake refuses it (and the kit's checks fail).
    search(results, request) {
      const params = serplyParams(request);
      if (request.method !== "GET" || !params) return { status: 404, body: { message: "Not Found" } };
      if (request.headers["x-api-key"] !== KEY) return { status: 401, body: { message: "Unauthorized" } };
      const num = Number(params.get("num"));
      if (!params.get("q") || !Number.isInteger(num)) return { status: 400, body: { message: "Missing query" } };
      return {
        status: 200,
        body: {
          results: results.slice(0, num).map((r, i) => ({ title: r.title, link: r.url, description: r.snippet, realPosition: i + 1 })),
          total: results.length,
        },
      };
    },
    error: (_status, message) => ({ message }),
  },
});

runPluginConformance(serplyToolsPlugin, {
  validConfig: { api_key: "k", gl: "us", hl: "en", proxy_location: "US" },
  invalidConfigs: [{ base_url: "not a url" }, { max_results: 101 }, { proxy_location: "XX" }, { lr: "en" }, { device: "tablet" }],
  dependencies: [createWebToolsPlugin()],
});
