import { capText, isHttpUrl, WebProviderHttpError, type WebSearchResult } from "@antler/tools-web/provider";
import { z } from "zod";

/** One entry of `Pages`: documented as a JSON string per result; an object is accepted too. */
const pageSchema = z.looseObject({
  title: z.string().default(""),
  url: z.string(),
  passage: z.string().optional(),
  content: z.string().optional(),
  date: z.string().optional(),
  site: z.string().optional(),
});

const responseSchema = z.looseObject({
  Response: z.looseObject({
    Pages: z.array(z.unknown()).nullish(),
    RequestId: z.string().optional(),
    Msg: z.string().optional(),
    Error: z.looseObject({ Code: z.string().default("UnknownError"), Message: z.string().default("") }).optional(),
  }),
});

export interface TencentWsaMappingCaps {
  readonly maxResults: number;
  readonly maxSnippetChars: number;
  readonly maxTitleChars: number;
}

/**
 * The HTTP status a Tencent Cloud API error code stands for, so the tool layer treats it like any vendor's:
 * auth failures name the key's env var, rate limits and internal errors are retried, the rest is reported.
 */
export function tencentErrorStatus(code: string): number {
  if (code.startsWith("AuthFailure") || code.startsWith("UnauthorizedOperation")) return 401;
  if (code.startsWith("RequestLimitExceeded")) return 429;
  if (code.startsWith("InternalError") || code === "ServiceUnavailable") return 503;
  return 400;
}

const clean = (text: string): string => text.replace(/\s+/g, " ").trim();

function parsePage(raw: unknown): z.output<typeof pageSchema> | undefined {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      return undefined;
    }
  }
  const page = pageSchema.safeParse(value);
  return page.success ? page.data : undefined;
}

/**
 * Maps SearchPro's answer `{ Response: { Pages: ["<json>", ...], RequestId } }`: `title`, `url`, the dynamic
 * summary `content` (premium plans) or else the standard `passage` as snippet, `date`. A `Response.Error` (HTTP
 * 200 with an error code, the Tencent Cloud convention) becomes `WebProviderHttpError` with the code and RequestId.
 */
export function mapTencentWsaResults(body: unknown, caps: TencentWsaMappingCaps, hint = ""): WebSearchResult[] {
  const parsed = responseSchema.safeParse(body);
  if (!parsed.success) throw new Error(`tencent-wsa answered with an unexpected shape: ${parsed.error.message.slice(0, 300)}`);
  const { Pages, RequestId, Error: apiError } = parsed.data.Response;
  if (apiError) {
    const detail = `${apiError.Code}: ${apiError.Message}${RequestId ? ` (RequestId ${RequestId})` : ""}${hint}`;
    throw new WebProviderHttpError("tencent-wsa", tencentErrorStatus(apiError.Code), detail);
  }
  const out: WebSearchResult[] = [];
  const seen = new Set<string>();
  for (const raw of Pages ?? []) {
    if (out.length >= caps.maxResults) break;
    const page = parsePage(raw);
    if (!page || !isHttpUrl(page.url) || seen.has(page.url)) continue;
    seen.add(page.url);
    out.push({
      title: capText(clean(page.title) || page.site || page.url, caps.maxTitleChars),
      url: page.url,
      snippet: capText(clean(page.content || page.passage || ""), caps.maxSnippetChars),
      publishedAt: page.date || undefined,
    });
  }
  return out;
}
