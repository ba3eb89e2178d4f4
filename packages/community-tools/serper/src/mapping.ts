import { capText, type ImageSearchResult, isHttpUrl, type WebSearchResult } from "@antler/tools-web/provider";
import { z } from "zod";

/** The parts of Serper's answers the provider reads; loose, so fields Serper adds never fail a search. */
const organicSchema = z.looseObject({
  title: z.string().default(""),
  link: z.string(),
  snippet: z.string().default(""),
  date: z.string().optional(),
});

const answerBoxSchema = z.looseObject({
  title: z.string().optional(),
  link: z.string().optional(),
  snippet: z.string().optional(),
  answer: z.string().optional(),
});

export const serperSearchResponseSchema = z.looseObject({
  searchParameters: z.looseObject({ q: z.string().optional(), type: z.string().optional() }).optional(),
  answerBox: z.unknown().optional(),
  organic: z.array(z.unknown()).default([]),
});

const imageSchema = z.looseObject({
  title: z.string().default(""),
  imageUrl: z.string(),
  imageWidth: z.number().optional(),
  imageHeight: z.number().optional(),
  thumbnailUrl: z.string().optional(),
  source: z.string().optional(),
  domain: z.string().optional(),
  link: z.string().optional(),
});

export const serperImagesResponseSchema = z.looseObject({
  searchParameters: z.looseObject({ q: z.string().optional(), type: z.string().optional() }).optional(),
  images: z.array(z.unknown()).default([]),
});

export interface SerperMappingCaps {
  readonly maxResults: number;
  readonly maxSnippetChars: number;
  readonly maxTitleChars: number;
  readonly includeAnswerBox?: boolean;
}

const clean = (text: string): string => text.replace(/\s+/g, " ").trim();

/** Maps `POST /search` JSON: the answer box first (when asked and linked), then organic results, deduplicated by URL. */
export function mapSerperSearchResults(body: unknown, caps: SerperMappingCaps): WebSearchResult[] {
  const parsed = serperSearchResponseSchema.safeParse(body);
  if (!parsed.success) throw new Error(`serper answered with an unexpected search shape: ${parsed.error.message.slice(0, 300)}`);
  const out: WebSearchResult[] = [];
  const seen = new Set<string>();
  const push = (title: string, url: string, snippet: string, publishedAt?: string) => {
    if (out.length >= caps.maxResults || seen.has(url)) return;
    seen.add(url);
    out.push({
      title: capText(clean(title) || url, caps.maxTitleChars),
      url,
      snippet: capText(clean(snippet), caps.maxSnippetChars),
      publishedAt,
    });
  };
  if (caps.includeAnswerBox) {
    const box = answerBoxSchema.safeParse(parsed.data.answerBox);
    if (box.success && isHttpUrl(box.data.link)) {
      push(box.data.title ?? "", box.data.link, [box.data.answer, box.data.snippet].filter(Boolean).join(" — "));
    }
  }
  for (const raw of parsed.data.organic) {
    const item = organicSchema.safeParse(raw);
    if (!item.success || !isHttpUrl(item.data.link)) continue;
    push(item.data.title, item.data.link, item.data.snippet, item.data.date);
  }
  return out;
}

/** Maps `POST /images` JSON: `imageUrl` is the image, `link` the page it is on. */
export function mapSerperImageResults(body: unknown, caps: Pick<SerperMappingCaps, "maxResults" | "maxTitleChars">): ImageSearchResult[] {
  const parsed = serperImagesResponseSchema.safeParse(body);
  if (!parsed.success) throw new Error(`serper answered with an unexpected images shape: ${parsed.error.message.slice(0, 300)}`);
  const out: ImageSearchResult[] = [];
  for (const raw of parsed.data.images) {
    if (out.length >= caps.maxResults) break;
    const item = imageSchema.safeParse(raw);
    if (!item.success || !isHttpUrl(item.data.imageUrl)) continue;
    const { title, imageUrl, imageWidth, imageHeight, thumbnailUrl, source, domain, link } = item.data;
    out.push({
      title: capText(clean(title) || source || domain || imageUrl, caps.maxTitleChars),
      imageUrl,
      thumbnailUrl: isHttpUrl(thumbnailUrl) ? thumbnailUrl : undefined,
      sourceUrl: isHttpUrl(link) ? link : undefined,
      width: imageWidth,
      height: imageHeight,
    });
  }
  return out;
}
