import { type LoopbackReply, type LoopbackServer, startLoopbackServer } from "@antler/tools-web/testing";

export function groundrouteError(status: number, message: string): LoopbackReply {
  return { status, body: { error: { message, status } } };
}

function meta(tier = "miss") {
  return { request_id: "req_3f9a", degraded: false, cache_meta: { cache_tier: tier }, usage_meta: { cost_usd: 0.001 } };
}

/** A routed search answer: results from the engine GroundRoute picked, with its routing metadata. */
export function groundrouteSearchBody(count: number): unknown {
  return {
    results: Array.from({ length: count }, (_, i) => ({
      url: `https://research.example.edu/antlers/${i + 1}`,
      title: `Antler regeneration study ${i + 1}`,
      snippet: i === 1 ? null : `Study ${i + 1}:  antlers regrow\n from stem cells.`,
      content: i === 1 ? "Full text of study 2, which has no snippet." : null,
      source_engine: "serper",
      published_at: i === 0 ? "2026-10-01T00:00:00Z" : null,
    })),
    answer: null,
    citations: [],
    ...meta(),
  };
}

/**
 * A loopback GroundRoute: `POST /v1/search` with `Authorization: Bearer <key>`, `max_results` 1–50, and in
 * `mode: "page"` the query is a URL whose page comes back as `content` (a URL containing "empty" has none).
 */
export async function startFakeGroundroute(key: string): Promise<LoopbackServer> {
  return startLoopbackServer((req) => {
    if (req.method !== "POST" || req.path !== "/v1/search") return groundrouteError(404, "not found");
    if (req.headers.authorization !== `Bearer ${key}`) return groundrouteError(401, "invalid API key");
    const body = req.json as { query?: unknown; max_results?: unknown; mode?: unknown } | undefined;
    const max = body?.max_results ?? 10;
    if (typeof body?.query !== "string" || typeof max !== "number" || max < 1 || max > 50)
      return groundrouteError(422, "query is required; max_results must be 1-50");
    if (body.mode === "page") {
      const empty = body.query.includes("empty");
      return {
        status: 200,
        body: {
          results: [
            {
              url: body.query,
              title: "Antler regeneration",
              snippet: empty ? "" : "Antlers regrow.",
              content: empty ? "" : "# Antler regeneration\n\nAntlers regrow from stem cells every year.",
              source_engine: "firecrawl",
            },
          ],
          ...meta(),
        },
      };
    }
    return { status: 200, body: groundrouteSearchBody(max) };
  });
}
