import { type LoopbackReply, type LoopbackServer, startLoopbackServer } from "@antler/tools-web/testing";

/** Crawl4AI's server is FastAPI: errors come as `{ "detail": ... }`. */
export function crawl4aiError(status: number, detail: string): LoopbackReply {
  return { status, body: { detail } };
}

const RAW =
  "[Home](/) | [Shop](/shop)\n\n# Antler growth\n\nAntlers are shed and regrown every year.\n\n© 2026 Deer Facts · Cookie settings";
const FIT = "# Antler growth\n\nAntlers are shed and regrown every year.";

/**
 * A loopback Crawl4AI Docker server: `POST /md` with `{ url, f, q?, c? }`. With `token` set it wants
 * `Authorization: Bearer <token>` (as servers since 0.9 do off localhost). A URL containing "refused" is a failed
 * crawl (`success: false`); one containing "empty" yields no Markdown.
 */
export async function startFakeCrawl4ai(token?: string): Promise<LoopbackServer> {
  return startLoopbackServer((req) => {
    if (req.path !== "/md") return crawl4aiError(404, "Not Found");
    if (req.method !== "POST") return crawl4aiError(405, "Method Not Allowed");
    if (token !== undefined && req.headers.authorization !== `Bearer ${token}`) return crawl4aiError(401, "Invalid or missing token");
    const body = req.json as { url?: unknown; f?: unknown; q?: unknown; c?: unknown } | undefined;
    if (typeof body?.url !== "string") return crawl4aiError(422, "url: Field required");
    const f = body.f ?? "fit";
    if (!["fit", "raw", "bm25", "llm"].includes(String(f))) return crawl4aiError(422, "f: Input should be 'raw', 'fit', 'bm25' or 'llm'");
    const common = { url: body.url, filter: f, query: body.q ?? null, cache: body.c ?? "0" };
    if (body.url.includes("refused")) return { status: 200, body: { ...common, markdown: "", success: false } };
    if (body.url.includes("empty")) return { status: 200, body: { ...common, markdown: "  \n", success: true } };
    return { status: 200, body: { ...common, markdown: f === "raw" ? RAW : FIT, success: true } };
  });
}
