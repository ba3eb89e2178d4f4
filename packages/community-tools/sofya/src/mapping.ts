import { capText, isHttpUrl, type WebFetchResult, type WebSearchResult } from "@antler/tools-web/provider";
import { z } from "zod";

const searchResultSchema = z.looseObject({
  title: z.string().nullish(),
  url: z.string(),
  content: z.string().nullish(),
  description: z.string().nullish(),
  published_date: z.string().nullish(),
});

const resultsSchema = z.looseObject({ results: z.array(z.unknown()).nullish() });

const fetchResultSchema = z.looseObject({
  url: z.string().nullish(),
  title: z.string().nullish(),
  content: z.string().nullish(),
  success: z.boolean().default(true),
  error: z.string().nullish(),
});

export interface SofyaSearchCaps {
  readonly maxResults: number;
  /** Per-result cap on the content: Sofya returns whole pages at `basic` depth. */
  readonly maxContentChars: number;
  readonly maxTitleChars: number;
}

/**
 * Maps `POST /search` JSON: `results[]` → title, url, and as snippet the page `content` (read at `basic` depth)
 * or else the search `description`, cut at `maxContentChars` so a normal search stays small.
 */
export function mapSofyaSearchResults(body: unknown, caps: SofyaSearchCaps): WebSearchResult[] {
  const parsed = resultsSchema.safeParse(body);
  if (!parsed.success) throw new Error(`sofya answered with an unexpected search shape: ${parsed.error.message.slice(0, 300)}`);
  const out: WebSearchResult[] = [];
  const seen = new Set<string>();
  for (const raw of parsed.data.results ?? []) {
    if (out.length >= caps.maxResults) break;
    const item = searchResultSchema.safeParse(raw);
    if (!item.success || !isHttpUrl(item.data.url) || seen.has(item.data.url)) continue;
    seen.add(item.data.url);
    const title = item.data.title?.replace(/\s+/g, " ").trim();
    out.push({
      title: capText(title || item.data.url, caps.maxTitleChars),
      url: item.data.url,
      snippet: capText((item.data.content || item.data.description || "").trim(), caps.maxContentChars),
      publishedAt: item.data.published_date || undefined,
    });
  }
  return out;
}

/** Maps `POST /fetch` JSON for one URL: its Markdown, or the error Sofya gives for the page. */
export function mapSofyaFetchResult(body: unknown, url: string, maxChars: number): WebFetchResult {
  const parsed = resultsSchema.safeParse(body);
  if (!parsed.success) throw new Error(`sofya answered with an unexpected fetch shape: ${parsed.error.message.slice(0, 300)}`);
  const first = fetchResultSchema.safeParse(parsed.data.results?.[0]);
  if (!first.success) throw new Error(`sofya returned no result for ${url}`);
  const page = first.data;
  if (!page.success) throw new Error(`sofya could not fetch ${url}: ${page.error || "no reason given"}`);
  if (!page.content?.trim()) throw new Error(`sofya returned no content for ${url}`);
  return { url: page.url || url, title: page.title || undefined, content: capText(page.content, maxChars), format: "markdown" };
}
