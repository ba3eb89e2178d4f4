import { capText, endpoint, readJson, type WebFetchResult, type WebSearchProvider } from "@antler/tools-web/provider";
import { z } from "zod";
import { CRAWL4AI_API_TOKEN_ENV, type Crawl4aiConfig } from "./config.js";

export const CRAWL4AI_PROVIDER_NAME = "crawl4ai";

/** The answer of `POST /md`. */
const mdAnswerSchema = z.looseObject({
  url: z.string().nullish(),
  filter: z.string().nullish(),
  markdown: z.string().nullish(),
  success: z.boolean().default(true),
});

export interface Crawl4aiProviderOptions {
  /** Where `CRAWL4AI_API_TOKEN` is looked up. Default `process.env`, read at call time. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The JSON body of `POST /md` for `url` under `config`: `url`, `f`, and `q` / `c` when they apply. */
export function crawl4aiMdBody(url: string, config: Pick<Crawl4aiConfig, "filter" | "query" | "bypass_cache">): Record<string, string> {
  const body: Record<string, string> = { url, f: config.filter };
  if (config.query !== undefined && (config.filter === "bm25" || config.filter === "llm")) body.q = config.query;
  if (config.bypass_cache) body.c = "1";
  return body;
}

/** Crawl4AI's Docker server: `POST {base_url}/md` renders the page in its browser and answers Markdown. */
export function createCrawl4aiProvider(config: Crawl4aiConfig, options: Crawl4aiProviderOptions = {}): WebSearchProvider {
  return {
    name: CRAWL4AI_PROVIDER_NAME,
    apiKeyEnv: CRAWL4AI_API_TOKEN_ENV,

    async fetch(url, ctx): Promise<WebFetchResult> {
      const token = config.api_key ?? (options.env ?? process.env)[CRAWL4AI_API_TOKEN_ENV];
      const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
      if (token) headers.authorization = `Bearer ${token}`;
      // The server is operator configuration (often on localhost): `vendorFetch`, not SSRF-screened. The page URL
      // itself already passed @antler/tools-web's guard.
      const response = await (ctx.vendorFetch ?? ctx.fetch)(endpoint(config.base_url, "md"), {
        method: "POST",
        headers,
        body: JSON.stringify(crawl4aiMdBody(url, config)),
        signal: ctx.signal,
      });
      const parsed = mdAnswerSchema.safeParse(await readJson(CRAWL4AI_PROVIDER_NAME, response));
      if (!parsed.success) throw new Error(`crawl4ai answered with an unexpected shape: ${parsed.error.message.slice(0, 300)}`);
      if (!parsed.data.success) throw new Error(`crawl4ai reported a failed crawl of ${url}`);
      const markdown = parsed.data.markdown?.trim();
      if (!markdown) throw new Error(`crawl4ai returned empty Markdown for ${url} (filter ${config.filter})`);
      return { url: parsed.data.url || url, content: capText(markdown, config.max_content_chars), format: "markdown" };
    },
  };
}
