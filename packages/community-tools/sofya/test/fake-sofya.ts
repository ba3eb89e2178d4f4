import { type LoopbackReply, type LoopbackServer, startLoopbackServer } from "@antler/tools-web/testing";

/** Sofya's error envelope. */
export function sofyaError(status: number, message: string): LoopbackReply {
  return { status, body: { error: message } };
}

/** A page's text, long enough (about 5,000 characters) that the per-result cap has something to cut. */
export function longPageText(n: number): string {
  const sentence = `Page ${n}: red deer grow antlers of bone every spring, covered in velvet until late summer. `;
  return sentence.repeat(Math.ceil(5000 / sentence.length));
}

/** A `/search` answer shaped like Sofya's: at `basic` depth each result carries its page's text. */
export function sofyaSearchBody(query: string, count: number, depth: string): unknown {
  const results = Array.from({ length: count }, (_, i) => ({
    title: `Antlers, part ${i + 1}`,
    url: `https://deer.example.org/antlers/${i + 1}`,
    description: `Short description ${i + 1} of antler growth.`,
    ...(depth === "basic" ? { content: longPageText(i + 1) } : {}),
    published_date: "2026-11-29",
    score: 0.8,
  }));
  return { query, results, response_time: 1.2 };
}

export interface FakeSofya extends LoopbackServer {
  readonly baseUrl: string;
  bodies(): Array<Record<string, unknown>>;
}

/** A loopback Sofya: Bearer check, `max_results` at most 20, `urls` at most 10, JSON answers in Sofya's shape. */
export async function startFakeSofya(key: string): Promise<FakeSofya> {
  const server = await startLoopbackServer((req) => {
    if (req.method !== "POST") return sofyaError(405, "Method not allowed");
    if (req.headers.authorization !== `Bearer ${key}`) return sofyaError(401, "Invalid API key");
    const body = req.json as Record<string, unknown> | undefined;
    if (req.path === "/v1/search") {
      const max = body?.max_results;
      if (typeof body?.query !== "string" || typeof max !== "number" || max < 1 || max > 20)
        return sofyaError(400, "query is required and max_results must be 1-20");
      return { status: 200, body: sofyaSearchBody(body.query, max, String(body.search_depth ?? "basic")) };
    }
    if (req.path === "/v1/fetch") {
      const urls = body?.urls;
      if (!Array.isArray(urls) || urls.length === 0 || urls.length > 10) return sofyaError(400, "urls must list 1-10 URLs");
      return {
        status: 200,
        body: {
          results: urls.map((url: string) =>
            url.includes("unreachable")
              ? { url, success: false, error: "The page could not be loaded (HTTP 404)" }
              : { url, title: "Antler growth", content: "# Antler growth\n\nAntlers are shed and regrown every year.", success: true },
          ),
        },
      };
    }
    return sofyaError(404, "Not found");
  });
  return { ...server, baseUrl: `${server.url}/v1`, bodies: () => server.requests.map((r) => r.json as Record<string, unknown>) };
}
