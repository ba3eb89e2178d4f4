import { capText, isHttpUrl, type WebSearchResult } from "@antler/tools-web/provider";
import { z } from "zod";

/** One organic result of `GET /search/...`; loose, so fields Serply adds never fail a search. */
const resultSchema = z.looseObject({
  title: z.string().default(""),
  link: z.string(),
  description: z.string().default(""),
});

export const serplySearchResponseSchema = z.looseObject({
  results: z.array(z.unknown()).default([]),
});

export interface SerplyMappingCaps {
  readonly maxResults: number;
  readonly maxSnippetChars: number;
  readonly maxTitleChars: number;
}

const clean = (text: string): string => text.replace(/\s+/g, " ").trim();

/** Maps Serply's search JSON (`results[]`: `title`, `link`, `description`), deduplicated by URL, capped. */
export function mapSerplySearchResults(body: unknown, caps: SerplyMappingCaps): WebSearchResult[] {
  const parsed = serplySearchResponseSchema.safeParse(body);
  if (!parsed.success) throw new Error(`serply answered with an unexpected search shape: ${parsed.error.message.slice(0, 300)}`);
  const out: WebSearchResult[] = [];
  const seen = new Set<string>();
  for (const raw of parsed.data.results) {
    if (out.length >= caps.maxResults) break;
    const item = resultSchema.safeParse(raw);
    if (!item.success || !isHttpUrl(item.data.link) || seen.has(item.data.link)) continue;
    seen.add(item.data.link);
    out.push({
      title: capText(clean(item.data.title) || item.data.link, caps.maxTitleChars),
      url: item.data.link,
      snippet: capText(clean(item.data.description), caps.maxSnippetChars),
    });
  }
  return out;
}
