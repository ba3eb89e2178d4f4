import { capText, isHttpUrl, type WebFetchResult, type WebSearchResult } from "@antler/tools-web/provider";
import { z } from "zod";

const hitSchema = z.looseObject({
  url: z.string(),
  title: z.string().nullish(),
  snippet: z.string().nullish(),
  content: z.string().nullish(),
  source_engine: z.string().nullish(),
  published_at: z.string().nullish(),
});

const answerSchema = z.looseObject({ results: z.array(z.unknown()).nullish(), request_id: z.string().nullish() });

export interface GroundrouteSearchCaps {
  readonly maxResults: number;
  readonly maxSnippetChars: number;
  readonly maxTitleChars: number;
}

const clean = (text: string): string => text.replace(/\s+/g, " ").trim();

function parse(body: unknown): z.output<typeof answerSchema> {
  const parsed = answerSchema.safeParse(body);
  if (!parsed.success) throw new Error(`groundroute answered with an unexpected shape: ${parsed.error.message.slice(0, 300)}`);
  return parsed.data;
}

/** Maps `POST /v1/search` JSON: `results[]` → `title`, `url`, `snippet` (else the start of `content`), `published_at`. */
export function mapGroundrouteSearchResults(body: unknown, caps: GroundrouteSearchCaps): WebSearchResult[] {
  const out: WebSearchResult[] = [];
  const seen = new Set<string>();
  for (const raw of parse(body).results ?? []) {
    if (out.length >= caps.maxResults) break;
    const hit = hitSchema.safeParse(raw);
    if (!hit.success || !isHttpUrl(hit.data.url) || seen.has(hit.data.url)) continue;
    seen.add(hit.data.url);
    out.push({
      title: capText(clean(hit.data.title ?? "") || hit.data.url, caps.maxTitleChars),
      url: hit.data.url,
      snippet: capText(clean(hit.data.snippet || hit.data.content || ""), caps.maxSnippetChars),
      publishedAt: hit.data.published_at || undefined,
    });
  }
  return out;
}

/** Maps a `mode: "page"` answer: the first result's `content` is the page (Markdown), else its snippet. */
export function mapGroundroutePage(body: unknown, url: string, maxChars: number): WebFetchResult {
  const answer = parse(body);
  const hit = hitSchema.safeParse(answer.results?.[0]);
  const requestId = answer.request_id ? ` (request ${answer.request_id})` : "";
  if (!hit.success) throw new Error(`groundroute returned no page for ${url}${requestId}`);
  const content = (hit.data.content || hit.data.snippet || "").trim();
  if (!content) throw new Error(`groundroute returned an empty page for ${url}${requestId}`);
  return { url: hit.data.url || url, title: hit.data.title || undefined, content: capText(content, maxChars), format: "markdown" };
}
