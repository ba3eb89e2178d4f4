import {
  capText,
  ensureOk,
  type ImageSearchResult,
  trimBaseUrl,
  type WebCallContext,
  WebProviderHttpError,
  type WebSearchProvider,
  type WebSearchResult,
} from "@antler/tools-web/provider";
import { z } from "zod";
import type { SearxngConfig } from "./config.js";

export const SEARXNG_PROVIDER = "searxng";

// The fields of SearXNG's JSON answer the provider reads; everything else is ignored.
const searxngResultSchema = z.looseObject({
  url: z.string().optional(),
  title: z.string().optional(),
  content: z.string().nullish(),
  publishedDate: z.string().nullish(),
  img_src: z.string().nullish(),
  thumbnail_src: z.string().nullish(),
  resolution: z.string().nullish(),
});
const searxngAnswerSchema = z.looseObject({
  query: z.string().optional(),
  results: z.array(searxngResultSchema).default([]),
  unresponsive_engines: z.array(z.unknown()).optional(),
});

export type SearxngAnswer = z.output<typeof searxngAnswerSchema>;

function parseResolution(resolution: string | null | undefined): { width?: number; height?: number } {
  const m = /^\s*(\d+)\s*[x×]\s*(\d+)\s*$/i.exec(resolution ?? "");
  return m ? { width: Number(m[1]), height: Number(m[2]) } : {};
}

/** The SearXNG provider: `GET {base_url}/search?q=…&format=json` for web and image search. */
export function createSearxngProvider(config: SearxngConfig): WebSearchProvider {
  const base = trimBaseUrl(config.base_url);

  async function query(q: string, categories: readonly string[], ctx: WebCallContext): Promise<SearxngAnswer> {
    const params = new URLSearchParams({ q, format: "json", pageno: "1", categories: categories.join(",") });
    if (config.engines?.length) params.set("engines", config.engines.join(","));
    if (config.language) params.set("language", config.language);
    if (config.safesearch !== undefined) params.set("safesearch", String(config.safesearch));
    if (config.time_range) params.set("time_range", config.time_range);
    const doFetch = ctx.vendorFetch ?? fetch;
    let response: Response;
    try {
      response = await doFetch(`${base}/search?${params}`, {
        method: "GET",
        headers: { accept: "application/json", ...config.headers },
        signal: ctx.signal,
      });
      await ensureOk(SEARXNG_PROVIDER, response);
    } catch (err) {
      // SearXNG answers 403 when the JSON format is not enabled; say that rather than "wrong key".
      if (err instanceof WebProviderHttpError && err.status === 403) {
        throw new Error(
          `SearXNG at ${base} refused format=json (HTTP 403). Enable it in the instance's settings.yml (search.formats: [html, json]), or check the auth proxy in front of it.`,
        );
      }
      throw err;
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`SearXNG at ${base} did not answer JSON (got ${JSON.stringify(text.slice(0, 80))}); is base_url a SearXNG instance?`);
    }
    const parsed = searxngAnswerSchema.safeParse(json);
    if (!parsed.success) throw new Error(`SearXNG at ${base} answered JSON without a results list`);
    return parsed.data;
  }

  return {
    name: SEARXNG_PROVIDER,
    async search(q, { maxResults }, ctx): Promise<WebSearchResult[]> {
      const answer = await query(q, config.categories, ctx);
      const limit = Math.min(maxResults, config.max_results);
      const out: WebSearchResult[] = [];
      for (const r of answer.results) {
        if (out.length >= limit) break;
        if (!r.url) continue;
        out.push({
          title: r.title?.trim() || r.url,
          url: r.url,
          snippet: capText((r.content ?? "").trim(), config.max_snippet_chars),
          publishedAt: r.publishedDate ?? undefined,
        });
      }
      return out;
    },
    async images(q, { maxResults }, ctx): Promise<ImageSearchResult[]> {
      const answer = await query(q, config.image_categories, ctx);
      const limit = Math.min(maxResults, config.max_results);
      const out: ImageSearchResult[] = [];
      for (const r of answer.results) {
        if (out.length >= limit) break;
        if (!r.img_src) continue;
        out.push({
          title: r.title?.trim() || r.img_src,
          imageUrl: r.img_src,
          thumbnailUrl: r.thumbnail_src ?? undefined,
          sourceUrl: r.url,
          ...parseResolution(r.resolution),
        });
      }
      return out;
    },
  };
}
