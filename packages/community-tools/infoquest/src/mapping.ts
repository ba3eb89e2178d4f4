import { capText, type ImageSearchResult, isHttpUrl, type WebSearchResult } from "@antler/tools-web/provider";
import { z } from "zod";

/** `{ search_result: { results: [{ content: { results: { organic, top_stories, images_results } } }] } }`. */
const envelopeSchema = z.looseObject({
  search_result: z.looseObject({ results: z.array(z.unknown()).default([]) }),
});

const blockSchema = z.looseObject({
  content: z.looseObject({
    results: z.looseObject({
      organic: z.array(z.unknown()).nullish(),
      top_stories: z.looseObject({ items: z.array(z.unknown()).default([]) }).nullish(),
      images_results: z.array(z.unknown()).nullish(),
    }),
  }),
});

const organicSchema = z.looseObject({ title: z.string().default(""), url: z.string(), desc: z.string().default("") });
const storySchema = z.looseObject({
  title: z.string().min(1),
  url: z.string(),
  source: z.string().optional(),
  time_frame: z.string().optional(),
});
const imageSchema = z.looseObject({
  original: z.string(),
  title: z.string().default(""),
  url: z.string().optional(),
  thumbnail: z.string().optional(),
  width: z.number().optional(),
  height: z.number().optional(),
});

export interface InfoquestCaps {
  readonly maxResults: number;
  readonly maxSnippetChars: number;
  readonly maxTitleChars: number;
}

const clean = (text: string): string => text.replace(/\s+/g, " ").trim();

function blocks(body: unknown, what: string): Array<z.output<typeof blockSchema>["content"]["results"]> {
  const parsed = envelopeSchema.safeParse(body);
  if (!parsed.success) throw new Error(`infoquest answered without search_result.results (${what}): ${JSON.stringify(body).slice(0, 200)}`);
  return parsed.data.search_result.results.flatMap((raw) => {
    const block = blockSchema.safeParse(raw);
    return block.success ? [block.data.content.results] : [];
  });
}

/** Web results: organic pages (`title`, `url`, `desc`), then top stories (`source · time_frame` as snippet), by URL once. */
export function mapInfoquestSearchResults(body: unknown, caps: InfoquestCaps): WebSearchResult[] {
  const out: WebSearchResult[] = [];
  const seen = new Set<string>();
  const push = (title: string, url: string, snippet: string) => {
    if (out.length >= caps.maxResults || !isHttpUrl(url) || seen.has(url)) return;
    seen.add(url);
    out.push({ title: capText(clean(title) || url, caps.maxTitleChars), url, snippet: capText(clean(snippet), caps.maxSnippetChars) });
  };
  const all = blocks(body, "search");
  for (const results of all) {
    for (const raw of results.organic ?? []) {
      const item = organicSchema.safeParse(raw);
      if (item.success) push(item.data.title, item.data.url, item.data.desc);
    }
  }
  for (const results of all) {
    for (const raw of results.top_stories?.items ?? []) {
      const story = storySchema.safeParse(raw);
      if (story.success) push(story.data.title, story.data.url, [story.data.source, story.data.time_frame].filter(Boolean).join(" · "));
    }
  }
  return out;
}

/** Image results: `original` is the image, `url` the page it is on, deduplicated by image URL. */
export function mapInfoquestImageResults(body: unknown, caps: Pick<InfoquestCaps, "maxResults" | "maxTitleChars">): ImageSearchResult[] {
  const out: ImageSearchResult[] = [];
  const seen = new Set<string>();
  for (const results of blocks(body, "images")) {
    for (const raw of results.images_results ?? []) {
      if (out.length >= caps.maxResults) return out;
      const item = imageSchema.safeParse(raw);
      if (!item.success || !isHttpUrl(item.data.original) || seen.has(item.data.original)) continue;
      seen.add(item.data.original);
      out.push({
        title: capText(clean(item.data.title) || item.data.original, caps.maxTitleChars),
        imageUrl: item.data.original,
        thumbnailUrl: isHttpUrl(item.data.thumbnail) ? item.data.thumbnail : undefined,
        sourceUrl: isHttpUrl(item.data.url) ? item.data.url : undefined,
        width: item.data.width,
        height: item.data.height,
      });
    }
  }
  return out;
}
