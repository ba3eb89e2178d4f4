import { type LoopbackReply, type RecordedHttpRequest, runWebToolConformance } from "@antler/tools-web/testing";
import serperToolsPlugin from "../src/index.js";

const KEY = "serper-conformance-key";

/** The request must be what Serper expects, or the fake refuses it (and the kit's checks fail). */
function checkRequest(request: RecordedHttpRequest, path: string): { q: string; num: number } | LoopbackReply {
  if (request.method !== "POST" || request.path !== path) return { status: 404, body: { message: "Not found.", statusCode: 404 } };
  if (request.headers["x-api-key"] !== KEY) return { status: 403, body: { message: "Unauthorized.", statusCode: 403 } };
  const body = request.json as { q?: unknown; num?: unknown } | undefined;
  if (typeof body?.q !== "string" || typeof body.num !== "number")
    return { status: 400, body: { message: "Query not allowed.", statusCode: 400 } };
  return { q: body.q, num: body.num };
}

runWebToolConformance({
  provider: "serper",
  apiKeyEnv: "SERPER_API_KEY",
  plugins: (serverUrl) => [{ plugin: serperToolsPlugin, config: { api_key: KEY, base_url: serverUrl } }],
  vendor: {
    search(results, request) {
      const checked = checkRequest(request, "/search");
      if (!("q" in checked)) return checked;
      return {
        status: 200,
        body: {
          searchParameters: { q: checked.q, type: "search", num: checked.num, engine: "google" },
          organic: results
            .slice(0, checked.num)
            .map((r, i) => ({ title: r.title, link: r.url, snippet: r.snippet, date: r.publishedAt, position: i + 1 })),
          credits: 1,
        },
      };
    },
    images(images, request) {
      const checked = checkRequest(request, "/images");
      if (!("q" in checked)) return checked;
      return {
        status: 200,
        body: {
          searchParameters: { q: checked.q, type: "images", num: checked.num, engine: "google" },
          images: images.slice(0, checked.num).map((i, n) => ({
            title: i.title,
            imageUrl: i.imageUrl,
            imageWidth: i.width,
            imageHeight: i.height,
            thumbnailUrl: i.thumbnailUrl,
            source: new URL(i.sourceUrl).hostname,
            domain: new URL(i.sourceUrl).hostname,
            link: i.sourceUrl,
            position: n + 1,
          })),
          credits: 1,
        },
      };
    },
    error: (status, message) => ({ message, statusCode: status }),
  },
});
