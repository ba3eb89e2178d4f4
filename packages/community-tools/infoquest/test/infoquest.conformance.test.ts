import { runPluginConformance } from "@antler/kernel/testing";
import { createWebToolsPlugin } from "@antler/tools-web";
import { type LoopbackReply, type RecordedHttpRequest, runWebToolConformance } from "@antler/tools-web/testing";
import infoquestToolsPlugin from "../src/index.js";

const KEY = "iq-conformance-key";

/** The request must be what InfoQuest expects, or the fake refuses it (and the kit's checks fail). */
function refuse(request: RecordedHttpRequest, path: string): LoopbackReply | undefined {
  if (request.method !== "POST" || request.path !== path) return { status: 404, body: { error: "not found" } };
  if (request.headers.authorization !== `Bearer ${KEY}`) return { status: 401, body: { error: "invalid api key" } };
  return undefined;
}

const envelope = (results: Record<string, unknown>) => ({ search_result: { results: [{ content: { results } }] } });

runWebToolConformance({
  provider: "infoquest",
  apiKeyEnv: "INFOQUEST_API_KEY",
  plugins: (serverUrl) => [
    { plugin: infoquestToolsPlugin, config: { api_key: KEY, search_url: `${serverUrl}/search`, reader_url: `${serverUrl}/reader` } },
  ],
  vendor: {
    search(results, request) {
      const refused = refuse(request, "/search");
      if (refused) return refused;
      if ((request.json as { format?: unknown }).format !== "JSON") return { status: 400, body: { error: "format" } };
      return { status: 200, body: envelope({ organic: results.map((r) => ({ title: r.title, url: r.url, desc: r.snippet })) }) };
    },
    images(images, request) {
      const refused = refuse(request, "/search");
      if (refused) return refused;
      if ((request.json as { search_type?: unknown }).search_type !== "Images") return { status: 400, body: { error: "search_type" } };
      return {
        status: 200,
        body: envelope({
          images_results: images.map((i) => ({
            original: i.imageUrl,
            title: i.title,
            url: i.sourceUrl,
            thumbnail: i.thumbnailUrl,
            width: i.width,
            height: i.height,
          })),
        }),
      };
    },
    fetch(page, request) {
      const refused = refuse(request, "/reader");
      if (refused) return refused;
      const body = request.json as { url?: unknown; format?: unknown };
      if (body.url !== page.url || body.format !== "HTML") return { status: 400, body: { error: "url" } };
      return { status: 200, body: { reader_result: page.html } };
    },
    error: (_status, message) => ({ error: message }),
  },
});

runPluginConformance(infoquestToolsPlugin, {
  validConfig: { api_key: "k", time_range: 30, site: "github.com", image_size: "m", fetch_timeout_seconds: 20 },
  invalidConfigs: [{ search_url: "not a url" }, { time_range: 0 }, { time_range: 366 }, { image_size: "xl" }, { max_results: 51 }],
  dependencies: [createWebToolsPlugin()],
});
