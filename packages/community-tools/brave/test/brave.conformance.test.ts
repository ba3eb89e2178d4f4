import { type LoopbackReply, type RecordedHttpRequest, runWebToolConformance } from "@antler/tools-web/testing";
import braveToolsPlugin from "../src/index.js";

const TOKEN = "BSA-conformance-token";

const escapeHtml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/'/g, "&#x27;");

function errorBody(status: number, detail: string): unknown {
  return { type: "ErrorResponse", error: { id: "conformance", status, code: status === 429 ? "RATE_LIMITED" : "ERROR", detail, meta: {} } };
}

/** The request must be what Brave expects, or the fake answers 422 like Brave's validator (and the kit's checks fail). */
function checkRequest(request: RecordedHttpRequest, path: string): LoopbackReply | undefined {
  if (request.method !== "GET" || request.path !== path)
    return { status: 404, body: errorBody(404, `no route ${request.method} ${request.path}`) };
  if (request.headers["x-subscription-token"] !== TOKEN)
    return { status: 401, body: errorBody(401, "The provided subscription token is invalid.") };
  if (!request.query.get("q") || !request.query.get("count")) return { status: 422, body: errorBody(422, "q and count are required") };
  return undefined;
}

runWebToolConformance({
  provider: "brave",
  apiKeyEnv: "BRAVE_SEARCH_API_KEY",
  plugins: (serverUrl) => [{ plugin: braveToolsPlugin, config: { api_key: TOKEN, base_url: `${serverUrl}/res/v1` } }],
  vendor: {
    search(results, request) {
      const bad = checkRequest(request, "/res/v1/web/search");
      if (bad) return bad;
      const count = Number(request.query.get("count"));
      return {
        status: 200,
        body: {
          type: "search",
          query: { original: request.query.get("q"), more_results_available: false },
          web: {
            type: "search",
            // Brave sends titles and descriptions as escaped HTML fragments.
            results: results.slice(0, count).map((r) => ({
              type: "search_result",
              title: escapeHtml(r.title),
              url: r.url,
              description: `<strong>${escapeHtml(r.snippet)}</strong>`,
              page_age: r.publishedAt,
              meta_url: { hostname: new URL(r.url).hostname },
            })),
          },
        },
      };
    },
    images(images, request) {
      const bad = checkRequest(request, "/res/v1/images/search");
      if (bad) return bad;
      const count = Number(request.query.get("count"));
      return {
        status: 200,
        body: {
          type: "images",
          query: { original: request.query.get("q") },
          results: images.slice(0, count).map((i) => ({
            type: "image_result",
            title: escapeHtml(i.title),
            url: i.sourceUrl,
            source: new URL(i.sourceUrl).hostname,
            thumbnail: { src: i.thumbnailUrl },
            properties: { url: i.imageUrl, width: i.width, height: i.height },
          })),
          extra: { might_be_offensive: false },
        },
      };
    },
    error: (status, message) => errorBody(status, message),
  },
});
