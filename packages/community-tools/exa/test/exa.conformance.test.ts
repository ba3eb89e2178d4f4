import { type LoopbackReply, type RecordedHttpRequest, runWebToolConformance } from "@antler/tools-web/testing";
import exaToolsPlugin from "../src/index.js";

const KEY = "exa-conformance-key";

function checkRequest(request: RecordedHttpRequest, path: string): Record<string, unknown> | LoopbackReply {
  if (request.method !== "POST" || request.path !== path) return { status: 404, body: { error: "Not found", tag: "NOT_FOUND" } };
  if (request.headers["x-api-key"] !== KEY) return { status: 401, body: { error: "Invalid API key", tag: "INVALID_API_KEY" } };
  const body = request.json;
  if (typeof body !== "object" || body === null) return { status: 400, body: { error: "Invalid JSON", tag: "INVALID_REQUEST_BODY" } };
  return { body: body as Record<string, unknown> };
}

runWebToolConformance({
  provider: "exa",
  apiKeyEnv: "EXA_API_KEY",
  plugins: (serverUrl) => [{ plugin: exaToolsPlugin, config: { api_key: KEY, base_url: serverUrl } }],
  vendor: {
    search(results, request) {
      const checked = checkRequest(request, "/search");
      if ("status" in checked) return checked as LoopbackReply;
      const body = checked.body as { query?: unknown; numResults?: unknown };
      if (typeof body.query !== "string" || typeof body.numResults !== "number") {
        return { status: 400, body: { error: "query and numResults are required", tag: "INVALID_REQUEST_BODY" } };
      }
      return {
        status: 200,
        body: {
          requestId: "conformance",
          resolvedSearchType: "neural",
          results: results.slice(0, body.numResults).map((r) => ({
            id: r.url,
            url: r.url,
            title: r.title,
            publishedDate: r.publishedAt,
            highlights: [r.snippet],
            highlightScores: [0.5],
          })),
          costDollars: { total: 0.005 },
        },
      };
    },
    fetch(page, request) {
      const checked = checkRequest(request, "/contents");
      if ("status" in checked) return checked as LoopbackReply;
      const urls = (checked.body as { urls?: unknown }).urls;
      if (!Array.isArray(urls) || urls[0] !== page.url)
        return { status: 400, body: { error: "urls must name the page", tag: "INVALID_URLS" } };
      return {
        status: 200,
        body: {
          requestId: "conformance",
          results: [{ id: page.url, url: page.url, title: page.title, text: page.markdown }],
          statuses: [{ id: page.url, status: "success" }],
          costDollars: { total: 0.001 },
        },
      };
    },
    error: (status, message) => ({ requestId: "conformance", error: message, tag: status === 429 ? "RATE_LIMIT_EXCEEDED" : "ERROR" }),
  },
});
