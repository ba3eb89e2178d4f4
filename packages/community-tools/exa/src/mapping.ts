import { capText, isHttpUrl, type WebFetchResult, type WebSearchResult } from "@antler/tools-web/provider";
import { z } from "zod";

/** The parts of Exa's answers the provider reads; loose, so fields Exa adds never fail a call. */
const exaResultSchema = z.looseObject({
  id: z.string().optional(),
  url: z.string(),
  title: z.string().nullish(),
  publishedDate: z.string().nullish(),
  author: z.string().nullish(),
  text: z.string().nullish(),
  highlights: z.array(z.string()).nullish(),
  summary: z.string().nullish(),
});

export const exaSearchResponseSchema = z.looseObject({
  requestId: z.string().optional(),
  results: z.array(z.unknown()),
});

const exaStatusSchema = z.looseObject({
  id: z.string(),
  status: z.string(),
  error: z.looseObject({ tag: z.string().optional(), httpStatusCode: z.number().nullish() }).nullish(),
});

export const exaContentsResponseSchema = z.looseObject({
  requestId: z.string().optional(),
  results: z.array(z.unknown()).default([]),
  statuses: z.array(z.unknown()).optional(),
});

export interface ExaMappingCaps {
  readonly maxResults: number;
  readonly maxSnippetChars: number;
  readonly maxTitleChars: number;
}

const clean = (text: string): string => text.replace(/\s+/g, " ").trim();

/** Maps `POST /search` JSON; the snippet is the highlights joined with " … ", or else the page text or summary. */
export function mapExaSearchResults(body: unknown, caps: ExaMappingCaps): WebSearchResult[] {
  const parsed = exaSearchResponseSchema.safeParse(body);
  if (!parsed.success) throw new Error(`exa answered with an unexpected search shape: ${parsed.error.message.slice(0, 300)}`);
  const out: WebSearchResult[] = [];
  for (const raw of parsed.data.results) {
    if (out.length >= caps.maxResults) break;
    const item = exaResultSchema.safeParse(raw);
    if (!item.success || !isHttpUrl(item.data.url)) continue;
    const { url, title, publishedDate, text, highlights, summary } = item.data;
    const snippet = highlights?.length ? highlights.map(clean).join(" … ") : clean(text ?? summary ?? "");
    out.push({
      title: capText(clean(title ?? "") || url, caps.maxTitleChars),
      url,
      snippet: capText(snippet, caps.maxSnippetChars),
      publishedAt: publishedDate ?? undefined,
    });
  }
  return out;
}

/** Why Exa could not fetch a URL, from the per-URL `statuses` of `/contents`. */
export class ExaContentsError extends Error {
  constructor(
    readonly url: string,
    readonly tag: string,
    readonly httpStatusCode: number | undefined,
  ) {
    super(
      `exa could not fetch ${url}: ${tag}${httpStatusCode ? ` (the page answered HTTP ${httpStatusCode})` : ""}. ` +
        (tag === "CRAWL_TIMEOUT" ? "Try again later." : "Check the URL, or fetch it with another provider."),
    );
    this.name = "ExaContentsError";
  }
}

/**
 * Maps `POST /contents` JSON for one requested URL. Exa reports per-URL failures in `statuses` with HTTP 200, so
 * they are not vendor errors (a 403 there is the page's, not a rejected key): they become `ExaContentsError`.
 */
export function mapExaContents(body: unknown, requestedUrl: string): WebFetchResult {
  const parsed = exaContentsResponseSchema.safeParse(body);
  if (!parsed.success) throw new Error(`exa answered with an unexpected contents shape: ${parsed.error.message.slice(0, 300)}`);
  for (const raw of parsed.data.statuses ?? []) {
    const status = exaStatusSchema.safeParse(raw);
    if (status.success && status.data.status !== "success") {
      throw new ExaContentsError(
        status.data.id || requestedUrl,
        status.data.error?.tag ?? status.data.status,
        status.data.error?.httpStatusCode ?? undefined,
      );
    }
  }
  const first = parsed.data.results.map((r) => exaResultSchema.safeParse(r)).find((r) => r.success);
  if (!first?.success) throw new ExaContentsError(requestedUrl, "NO_CONTENT_RETURNED", undefined);
  const { url, title, text } = first.data;
  return {
    url: isHttpUrl(url) ? url : requestedUrl,
    title: title ? clean(title) : undefined,
    content: text ?? "",
    format: "markdown",
  };
}
