import { type LoopbackReply, type LoopbackServer, startLoopbackServer } from "@antler/tools-web/testing";

/** fastCRW's error envelope. */
export function crwError(status: number, error: string, errorCode?: string): LoopbackReply {
  return { status, body: { success: false, error, ...(errorCode ? { errorCode } : {}) } };
}

export function crwResults(count: number): unknown[] {
  return Array.from({ length: count }, (_, i) => ({
    url: `https://docs.example.rs/async/${i + 1}`,
    title: `Rust async runtime, part ${i + 1}`,
    snippet: `Part ${i + 1}: executors,\n wakers and futures.`,
    description: `Part ${i + 1}: executors,\n wakers and futures.`,
    position: i + 1,
    score: 1 - i / 10,
    category: "general",
  }));
}

export interface FakeFastcrwOptions {
  /** The hosted API wants a Bearer key; a self-hosted engine does not (unless its operator set one). */
  readonly key?: string | undefined;
  /** hosted: `data` is the list; self-hosted: `data.results` is. */
  readonly shape?: "hosted" | "self-hosted";
  /** A self-hosted engine without a search backend. */
  readonly searchDisabled?: boolean;
}

/** A loopback fastCRW speaking `/v1/search` and `/v1/scrape`. A URL containing "gone" scrapes as a page that answered 404. */
export async function startFakeFastcrw(options: FakeFastcrwOptions = {}): Promise<LoopbackServer> {
  return startLoopbackServer((req) => {
    if (req.method !== "POST") return crwError(405, "method not allowed");
    if (options.key !== undefined && req.headers.authorization !== `Bearer ${options.key}`)
      return crwError(401, "Missing or invalid API key", "unauthorized");
    const body = req.json as Record<string, unknown> | undefined;
    if (req.path === "/v1/search") {
      if (options.searchDisabled) return crwError(503, "search is disabled on this server", "search_disabled");
      const limit = body?.limit ?? 5;
      if (typeof body?.query !== "string" || typeof limit !== "number" || limit < 1 || limit > 20)
        return crwError(400, "query is required; limit must be 1-20", "invalid_request");
      const results = crwResults(limit);
      return { status: 200, body: { success: true, data: options.shape === "self-hosted" ? { results, warnings: [] } : results } };
    }
    if (req.path === "/v1/scrape") {
      if (typeof body?.url !== "string") return crwError(400, "url is required", "invalid_request");
      if (body.url.includes("gone")) {
        return {
          status: 200,
          body: { success: true, data: { markdown: "Not Found", metadata: { sourceURL: body.url, statusCode: 404 } } },
        };
      }
      return {
        status: 200,
        body: {
          success: true,
          data: {
            markdown: "# Async in Rust\n\nFutures do nothing until polled.",
            metadata: { title: "Async in Rust", sourceURL: body.url, statusCode: 200 },
            creditCost: 1,
          },
        },
      };
    }
    return crwError(404, "not found");
  });
}
