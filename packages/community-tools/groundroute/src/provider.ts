import {
  endpoint,
  readJson,
  requireApiKey,
  type WebCallContext,
  type WebFetchResult,
  type WebSearchProvider,
  type WebSearchResult,
} from "@antler/tools-web/provider";
import { GROUNDROUTE_API_KEY_ENV, GROUNDROUTE_MAX_RESULTS, type GroundrouteConfig } from "./config.js";
import { mapGroundroutePage, mapGroundrouteSearchResults } from "./mapping.js";

export const GROUNDROUTE_PROVIDER_NAME = "groundroute";

export interface GroundrouteProviderOptions {
  /** Where `GROUNDROUTE_API_KEY` is looked up. Default `process.env`, read at call time. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Config path named in errors. */
  readonly where?: string;
}

/** GroundRoute: one `POST {base_url}/v1/search` for both tools; web_fetch is a search in `mode: "page"` for the URL. */
export function createGroundrouteProvider(config: GroundrouteConfig, options: GroundrouteProviderOptions = {}): WebSearchProvider {
  const apiKey = (): string =>
    requireApiKey({
      configured: config.api_key,
      envVar: GROUNDROUTE_API_KEY_ENV,
      env: options.env,
      vendor: "GroundRoute",
      where: options.where ?? "plugins[@antler/tools-groundroute].config.api_key",
      keyPage: "https://groundroute.ai/keys",
    });

  const search = async (body: Record<string, unknown>, ctx: WebCallContext): Promise<unknown> => {
    const response = await (ctx.vendorFetch ?? ctx.fetch)(endpoint(config.base_url, "v1/search"), {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey()}`, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
      signal: ctx.signal,
    });
    return readJson(GROUNDROUTE_PROVIDER_NAME, response);
  };

  return {
    name: GROUNDROUTE_PROVIDER_NAME,
    apiKeyEnv: GROUNDROUTE_API_KEY_ENV,

    async search(query, { maxResults }, ctx): Promise<WebSearchResult[]> {
      const count = Math.max(1, Math.min(maxResults, config.max_results, GROUNDROUTE_MAX_RESULTS));
      const body: Record<string, unknown> = { query, max_results: count, mode: config.mode };
      if (config.freshness) body.freshness = config.freshness;
      if (config.domains) body.domains = config.domains;
      if (config.lang) body.lang = config.lang;
      if (config.country) body.country = config.country;
      return mapGroundrouteSearchResults(await search(body, ctx), {
        maxResults: count,
        maxSnippetChars: config.max_snippet_chars,
        maxTitleChars: config.max_title_chars,
      });
    },

    async fetch(url, ctx): Promise<WebFetchResult> {
      // The URL already passed @antler/tools-web's SSRF guard; GroundRoute fetches it.
      return mapGroundroutePage(await search({ query: url, mode: "page", max_results: 1 }, ctx), url, config.max_content_chars);
    },
  };
}
