import { capText, isHttpUrl, type WebFetchResult, type WebSearchResult } from "@antler/tools-web/provider";
import { z } from "zod";

const resultSchema = z.looseObject({
  url: z.string(),
  title: z.string().nullish(),
  snippet: z.string().nullish(),
  description: z.string().nullish(),
  markdown: z.string().nullish(),
});

const searchEnvelopeSchema = z.looseObject({
  success: z.boolean().default(true),
  error: z.string().optional(),
  data: z.unknown().optional(),
});

const scrapeEnvelopeSchema = z.looseObject({
  success: z.boolean().default(true),
  error: z.string().optional(),
  data: z
    .looseObject({
      markdown: z.string().nullish(),
      metadata: z
        .looseObject({
          title: z.string().nullish(),
          sourceURL: z.string().nullish(),
          url: z.string().nullish(),
          statusCode: z.number().nullish(),
          error: z.string().nullish(),
        })
        .nullish(),
    })
    .nullish(),
});

export interface FastcrwSearchCaps {
  readonly maxResults: number;
  readonly maxSnippetChars: number;
  readonly maxTitleChars: number;
}

/**
 * The result list of a search answer. The hosted API puts it in `data`; a self-hosted engine nests it as
 * `data.results`; with `sources` set either is grouped as `{ web: [...] }`. All three are read.
 */
function resultList(data: unknown): unknown[] {
  let value = data;
  if (value && typeof value === "object" && !Array.isArray(value) && "results" in value) value = (value as { results: unknown }).results;
  if (value && typeof value === "object" && !Array.isArray(value) && "web" in value) value = (value as { web: unknown }).web;
  if (!Array.isArray(value)) throw new Error(`fastcrw answered with an unexpected search shape: ${JSON.stringify(data).slice(0, 200)}`);
  return value;
}

const clean = (text: string): string => text.replace(/\s+/g, " ").trim();

/** Maps `POST /v1/search` JSON: `title`, `url`, `snippet` (or its alias `description`, or scraped `markdown`). */
export function mapFastcrwSearchResults(body: unknown, caps: FastcrwSearchCaps): WebSearchResult[] {
  const envelope = searchEnvelopeSchema.safeParse(body);
  if (!envelope.success) throw new Error(`fastcrw answered with an unexpected search shape: ${envelope.error.message.slice(0, 300)}`);
  if (!envelope.data.success) throw new Error(`fastcrw reported a failed search: ${envelope.data.error ?? "no reason given"}`);
  const out: WebSearchResult[] = [];
  const seen = new Set<string>();
  for (const raw of resultList(envelope.data.data)) {
    if (out.length >= caps.maxResults) break;
    const item = resultSchema.safeParse(raw);
    if (!item.success || !isHttpUrl(item.data.url) || seen.has(item.data.url)) continue;
    seen.add(item.data.url);
    out.push({
      title: capText(clean(item.data.title ?? "") || item.data.url, caps.maxTitleChars),
      url: item.data.url,
      snippet: capText(clean(item.data.snippet || item.data.description || item.data.markdown || ""), caps.maxSnippetChars),
    });
  }
  return out;
}

/** Maps `POST /v1/scrape` JSON: `data.markdown` with `data.metadata.title`; a failed scrape or page status is an error. */
export function mapFastcrwScrape(body: unknown, url: string, maxChars: number): WebFetchResult {
  const envelope = scrapeEnvelopeSchema.safeParse(body);
  if (!envelope.success) throw new Error(`fastcrw answered with an unexpected scrape shape: ${envelope.error.message.slice(0, 300)}`);
  if (!envelope.data.success) throw new Error(`fastcrw could not scrape ${url}: ${envelope.data.error ?? "no reason given"}`);
  const meta = envelope.data.data?.metadata;
  if (typeof meta?.statusCode === "number" && meta.statusCode >= 400) {
    throw new Error(`fastcrw reached ${url}, but the page answered HTTP ${meta.statusCode}${meta.error ? ` (${meta.error})` : ""}`);
  }
  const markdown = envelope.data.data?.markdown?.trim();
  if (!markdown) throw new Error(`fastcrw returned no Markdown for ${url}`);
  return {
    url: meta?.url || meta?.sourceURL || url,
    title: meta?.title || undefined,
    content: capText(markdown, maxChars),
    format: "markdown",
  };
}
