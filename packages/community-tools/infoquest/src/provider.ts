import {
  ensureOk,
  type ImageSearchResult,
  readJson,
  requireApiKey,
  type WebCallContext,
  type WebFetchResult,
  type WebSearchProvider,
  type WebSearchResult,
} from "@antler/tools-web/provider";
import { INFOQUEST_API_KEY_ENV, type InfoquestConfig } from "./config.js";
import { mapInfoquestImageResults, mapInfoquestSearchResults } from "./mapping.js";

export const INFOQUEST_PROVIDER_NAME = "infoquest";

export interface InfoquestProviderOptions {
  /** Where `INFOQUEST_API_KEY` is looked up. Default `process.env`, read at call time. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Config path named in errors. */
  readonly where?: string;
}

/**
 * BytePlus InfoQuest: web and image search are `POST {search_url}` (JSON body, `format: "JSON"`), page reading is
 * `POST {reader_url}` answering the page's HTML, which @antler/tools-web extracts like any page. Bearer auth.
 */
export function createInfoquestProvider(config: InfoquestConfig, options: InfoquestProviderOptions = {}): WebSearchProvider {
  const apiKey = (): string =>
    requireApiKey({
      configured: config.api_key,
      envVar: INFOQUEST_API_KEY_ENV,
      env: options.env,
      vendor: "BytePlus InfoQuest",
      where: options.where ?? "plugins[@antler/tools-infoquest].config.api_key",
      keyPage: "the BytePlus console (InfoQuest), https://console.byteplus.com",
    });

  const post = (url: string, body: Record<string, unknown>, ctx: WebCallContext): Promise<Response> =>
    (ctx.vendorFetch ?? ctx.fetch)(url, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey()}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: ctx.signal,
    });

  const count = (maxResults: number) => Math.max(1, Math.min(maxResults, config.max_results));
  const caps = (maxResults: number) => ({
    maxResults: count(maxResults),
    maxSnippetChars: config.max_snippet_chars,
    maxTitleChars: config.max_title_chars,
  });

  return {
    name: INFOQUEST_PROVIDER_NAME,
    apiKeyEnv: INFOQUEST_API_KEY_ENV,

    async search(query, { maxResults }, ctx): Promise<WebSearchResult[]> {
      const body: Record<string, unknown> = { format: "JSON", query };
      if (config.time_range !== undefined) body.time_range = config.time_range;
      if (config.site) body.site = config.site;
      return mapInfoquestSearchResults(await readJson(INFOQUEST_PROVIDER_NAME, await post(config.search_url, body, ctx)), caps(maxResults));
    },

    async images(query, { maxResults }, ctx): Promise<ImageSearchResult[]> {
      const body: Record<string, unknown> = { format: "JSON", query, search_type: "Images", image_size: config.image_size };
      if (config.image_time_range !== undefined) body.time_range = config.image_time_range;
      if (config.site) body.site = config.site;
      return mapInfoquestImageResults(await readJson(INFOQUEST_PROVIDER_NAME, await post(config.search_url, body, ctx)), caps(maxResults));
    },

    async fetch(url, ctx): Promise<WebFetchResult> {
      const body: Record<string, unknown> = { url, format: "HTML" };
      if (config.fetch_timeout_seconds !== undefined) body.timeout = config.fetch_timeout_seconds;
      if (config.fetch_navigation_timeout_seconds !== undefined) body.navi_timeout = config.fetch_navigation_timeout_seconds;
      const text = await (await ensureOk(INFOQUEST_PROVIDER_NAME, await post(config.reader_url, body, ctx))).text();
      if (!text.trim()) throw new Error(`infoquest's reader returned nothing for ${url}`);
      let html = text;
      try {
        const json = JSON.parse(text) as { reader_result?: unknown; content?: unknown };
        const value = json.reader_result ?? json.content;
        if (typeof value !== "string") throw new Error(`infoquest's reader answered JSON without reader_result for ${url}`);
        html = value;
      } catch (error) {
        // Not JSON: some reader deployments answer the page itself.
        if (!(error instanceof SyntaxError)) throw error;
      }
      if (!html.trim()) throw new Error(`infoquest's reader returned an empty page for ${url}`);
      return { url, content: html, format: "html" };
    },
  };
}
