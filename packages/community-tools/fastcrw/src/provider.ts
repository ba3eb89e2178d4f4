import {
  endpoint,
  readJson,
  requireApiKey,
  trimBaseUrl,
  type WebCallContext,
  type WebFetchResult,
  type WebSearchProvider,
  type WebSearchResult,
} from "@antler/tools-web/provider";
import { CRW_API_KEY_ENV, FASTCRW_DEFAULT_BASE_URL, FASTCRW_MAX_LIMIT, type FastcrwConfig } from "./config.js";
import { mapFastcrwScrape, mapFastcrwSearchResults } from "./mapping.js";

export const FASTCRW_PROVIDER_NAME = "fastcrw";

export interface FastcrwProviderOptions {
  /** Where `CRW_API_KEY` is looked up. Default `process.env`, read at call time. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Config path named in errors. */
  readonly where?: string;
}

/** fastCRW's Firecrawl-compatible API: `POST {base_url}/v1/search` and `POST {base_url}/v1/scrape`, Bearer on the hosted API. */
export function createFastcrwProvider(config: FastcrwConfig, options: FastcrwProviderOptions = {}): WebSearchProvider {
  const hosted = trimBaseUrl(config.base_url) === FASTCRW_DEFAULT_BASE_URL;
  // The hosted API needs a key; a self-hosted engine takes one only when its operator set one.
  const apiKey = (): string | undefined => {
    const key = config.api_key ?? (options.env ?? process.env)[CRW_API_KEY_ENV];
    if (key || !hosted) return key || undefined;
    return requireApiKey({
      configured: undefined,
      envVar: CRW_API_KEY_ENV,
      env: options.env,
      vendor: "fastCRW",
      where: options.where ?? "plugins[@antler/tools-fastcrw].config.api_key",
      keyPage: "https://fastcrw.com/register (or point base_url at a self-hosted engine)",
    });
  };

  const post = async (path: string, body: Record<string, unknown>, ctx: WebCallContext): Promise<unknown> => {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    const key = apiKey();
    if (key) headers.authorization = `Bearer ${key}`;
    const response = await (ctx.vendorFetch ?? ctx.fetch)(endpoint(config.base_url, path), {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal: ctx.signal,
    });
    if (response.status === 503) {
      // A self-hosted engine without a search backend answers 503 search_disabled: retrying cannot help.
      const text = await response.clone().text();
      if (text.includes("search_disabled")) {
        throw new Error(
          `fastcrw at ${trimBaseUrl(config.base_url)} has search disabled (search_disabled); enable its search backend, or serve web_search with another provider`,
        );
      }
    }
    return readJson(FASTCRW_PROVIDER_NAME, response);
  };

  return {
    name: FASTCRW_PROVIDER_NAME,
    apiKeyEnv: CRW_API_KEY_ENV,

    async search(query, { maxResults }, ctx): Promise<WebSearchResult[]> {
      const limit = Math.max(1, Math.min(maxResults, config.max_results, FASTCRW_MAX_LIMIT));
      const body: Record<string, unknown> = { query, limit };
      if (config.lang) body.lang = config.lang;
      if (config.tbs) body.tbs = config.tbs;
      return mapFastcrwSearchResults(await post("v1/search", body, ctx), {
        maxResults: limit,
        maxSnippetChars: config.max_snippet_chars,
        maxTitleChars: config.max_title_chars,
      });
    },

    async fetch(url, ctx): Promise<WebFetchResult> {
      const body: Record<string, unknown> = { url, formats: ["markdown"], onlyMainContent: config.only_main_content };
      if (config.render_js !== undefined) body.renderJs = config.render_js;
      if (config.deadline_ms !== undefined) body.deadlineMs = config.deadline_ms;
      return mapFastcrwScrape(await post("v1/scrape", body, ctx), url, config.max_content_chars);
    },
  };
}
