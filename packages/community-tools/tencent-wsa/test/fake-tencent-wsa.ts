import { type LoopbackReply, type LoopbackServer, type RecordedHttpRequest, startLoopbackServer } from "@antler/tools-web/testing";

let requestCounter = 0;
const requestId = () => `6f0c2d3e-0000-4000-8000-${String(++requestCounter).padStart(12, "0")}`;

/** A Tencent Cloud API error: HTTP 200 with `Response.Error`, the way Tencent Cloud APIs report failures. */
export function tencentError(code: string, message: string): LoopbackReply {
  return { status: 200, body: { Response: { Error: { Code: code, Message: message }, RequestId: requestId() } } };
}

export interface WsaPage {
  title: string;
  url: string;
  passage?: string;
  content?: string;
  date?: string;
  site?: string;
  score?: number;
}

/** A SearchPro answer: `Pages` is a list of JSON strings, one per result. */
export function tencentSearchBody(query: string, pages: readonly WsaPage[]): unknown {
  return { Response: { Query: query, Pages: pages.map((p) => JSON.stringify(p)), Msg: "", RequestId: requestId() } };
}

/** `count` realistic pages (more than 10 only for plans with Cnt). */
export function wsaPages(count: number): WsaPage[] {
  return Array.from({ length: count }, (_, i) => ({
    title: `鹿角的生长 ${i + 1}`,
    url: `https://news.qq.com/rain/a/2026113000${String(i + 1).padStart(2, "0")}`,
    passage: `鹿角每年脱落并重新生长，第 ${i + 1} 篇。`,
    date: "2026-11-30 08:00:00",
    site: "腾讯新闻",
    score: 0.9 - i / 100,
    images: [],
    favicon: "https://mat1.gtimg.com/www/icon/favicon2.ico",
  }));
}

export interface FakeTencentWsa extends LoopbackServer {
  /** The request bodies, parsed. */
  bodies(): Array<Record<string, unknown>>;
}

/**
 * A loopback SearchPro: POST /SearchPro with `Authorization: Bearer <key>` and a JSON body whose `Query` is set.
 * `premium: false` refuses `Cnt` and `Industry` like a plan without them; `Cnt` must be 10/20/30/40/50.
 */
export async function startFakeTencentWsa(key: string, options: { premium: boolean } = { premium: true }): Promise<FakeTencentWsa> {
  const server = await startLoopbackServer((req: RecordedHttpRequest) => {
    if (req.method !== "POST" || req.path !== "/SearchPro") return { status: 404, body: "404 page not found" };
    if (req.headers.authorization !== `Bearer ${key}`) return tencentError("AuthFailure.InvalidAuthorization", "The API key is invalid.");
    const body = req.json as { Query?: unknown; Cnt?: unknown; Industry?: unknown } | undefined;
    if (typeof body?.Query !== "string" || body.Query === "") return tencentError("MissingParameter", "The request is missing Query.");
    if (body.Cnt !== undefined && ![10, 20, 30, 40, 50].includes(body.Cnt as number))
      return tencentError("InvalidParameterValue", "Cnt must be one of 10, 20, 30, 40, 50.");
    if (!options.premium && (body.Cnt !== undefined || body.Industry !== undefined))
      return tencentError("FailedOperation", "The current plan does not support this parameter.");
    const count = typeof body.Cnt === "number" ? body.Cnt : 10;
    return { status: 200, body: tencentSearchBody(body.Query, wsaPages(count)) };
  });
  return { ...server, bodies: () => server.requests.map((r) => r.json as Record<string, unknown>) };
}
