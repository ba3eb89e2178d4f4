import { capText, type ImageSearchResult, isHttpUrl, type WebSearchResult } from "@antler/tools-web/provider";
import { z } from "zod";
import { htmlFragmentToText } from "./text.js";

/**
 * The parts of Brave's answers the provider reads. Loose objects: Brave adds fields often, and a field we do
 * not read must never fail a search.
 */
const braveWebResultSchema = z.looseObject({
  title: z.string().default(""),
  url: z.string(),
  description: z.string().default(""),
  page_age: z.string().optional(),
  age: z.string().optional(),
  extra_snippets: z.array(z.string()).optional(),
});

export const braveWebSearchResponseSchema = z.looseObject({
  type: z.literal("search").optional(),
  web: z.looseObject({ results: z.array(z.unknown()).default([]) }).optional(),
});

const braveImageResultSchema = z.looseObject({
  title: z.string().default(""),
  /** The page the image is on. */
  url: z.string().optional(),
  source: z.string().optional(),
  thumbnail: z.looseObject({ src: z.string().optional(), width: z.number().optional(), height: z.number().optional() }).optional(),
  properties: z.looseObject({ url: z.string().optional(), width: z.number().optional(), height: z.number().optional() }).optional(),
});

export const braveImageSearchResponseSchema = z.looseObject({
  type: z.literal("images").optional(),
  results: z.array(z.unknown()).default([]),
});

export interface BraveMappingCaps {
  readonly maxResults: number;
  readonly maxSnippetChars: number;
  readonly maxTitleChars: number;
  readonly extraSnippets?: boolean;
}

/** Maps `GET /web/search` JSON to results; entries without a usable http(s) URL are dropped, not fatal. */
export function mapBraveWebResults(body: unknown, caps: BraveMappingCaps): WebSearchResult[] {
  const parsed = braveWebSearchResponseSchema.safeParse(body);
  if (!parsed.success) throw new Error(`brave answered with an unexpected web search shape: ${parsed.error.message.slice(0, 300)}`);
  const out: WebSearchResult[] = [];
  for (const raw of parsed.data.web?.results ?? []) {
    if (out.length >= caps.maxResults) break;
    const item = braveWebResultSchema.safeParse(raw);
    if (!item.success || !isHttpUrl(item.data.url)) continue;
    const { title, url, description, page_age, age, extra_snippets } = item.data;
    const parts = [htmlFragmentToText(description)];
    if (caps.extraSnippets && extra_snippets) parts.push(...extra_snippets.map(htmlFragmentToText));
    out.push({
      title: capText(htmlFragmentToText(title) || url, caps.maxTitleChars),
      url,
      snippet: capText(parts.filter(Boolean).join(" … "), caps.maxSnippetChars),
      publishedAt: page_age ?? age,
    });
  }
  return out;
}

/** Maps `GET /images/search` JSON: `properties.url` is the image, `url` the page it sits on. */
export function mapBraveImageResults(body: unknown, caps: Omit<BraveMappingCaps, "maxSnippetChars">): ImageSearchResult[] {
  const parsed = braveImageSearchResponseSchema.safeParse(body);
  if (!parsed.success) throw new Error(`brave answered with an unexpected image search shape: ${parsed.error.message.slice(0, 300)}`);
  const out: ImageSearchResult[] = [];
  for (const raw of parsed.data.results) {
    if (out.length >= caps.maxResults) break;
    const item = braveImageResultSchema.safeParse(raw);
    if (!item.success) continue;
    const { title, url, source, thumbnail, properties } = item.data;
    const imageUrl = properties?.url;
    if (!isHttpUrl(imageUrl)) continue;
    out.push({
      title: capText(htmlFragmentToText(title) || source || imageUrl, caps.maxTitleChars),
      imageUrl,
      thumbnailUrl: isHttpUrl(thumbnail?.src) ? thumbnail.src : undefined,
      sourceUrl: isHttpUrl(url) ? url : undefined,
      width: properties?.width,
      height: properties?.height,
    });
  }
  return out;
}
