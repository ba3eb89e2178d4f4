import {
  endpoint,
  readJson,
  requireApiKey,
  type WebCallContext,
  type WebFetchResult,
  type WebSearchProvider,
  type WebSearchResult,
} from "@antler/tools-web/provider";
import { SOFYA_API_KEY_ENV, SOFYA_MAX_RESULTS, type SofyaConfig } from "./config.js";
import { mapSofyaFetchResult, mapSofyaSearchResults } from "./mapping.js";

export const SOFYA_PROVIDER_NAME = "sofya";

export interface SofyaProviderOptions {
  /** Where `SOFYA_API_KEY` is looked up. Default `process.env`, read at call time. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Config path named in errors. */
  readonly where?: string;
}

/** Sofya: `POST {base_url}/search` and `POST {base_url}/fetch` with JSON bodies and `Authorization: Bearer`. */
export function createSofyaProvider(config: SofyaConfig, options: SofyaProviderOptions = {}): WebSearchProvider {
  const apiKey = (): string =>
    requireApiKey({
      configured: config.api_key,
      envVar: SOFYA_API_KEY_ENV,
      env: options.env,
      vendor: "Sofya",
      where: options.where ?? "plugins[@antler/tools-sofya].config.api_key",
      keyPage: "https://sofya.co",
    });

  const post = async (path: string, body: Record<string, unknown>, ctx: WebCallContext): Promise<unknown> => {
    const response = await (ctx.vendorFetch ?? ctx.fetch)(endpoint(config.base_url, path), {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey()}`, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
      signal: ctx.signal,
    });
    return readJson(SOFYA_PROVIDER_NAME, response);
  };

  return {
    name: SOFYA_PROVIDER_NAME,
    apiKeyEnv: SOFYA_API_KEY_ENV,

    async search(query, { maxResults }, ctx): Promise<WebSearchResult[]> {
      const count = Math.max(1, Math.min(maxResults, config.max_results, SOFYA_MAX_RESULTS));
      const body: Record<string, unknown> = { query, max_results: count, search_depth: config.search_depth };
      if (config.freshness) body.freshness = config.freshness;
      if (config.include_domains?.length) body.include_domains = config.include_domains;
      if (config.topic) body.topic = config.topic;
      return mapSofyaSearchResults(await post("search", body, ctx), {
        maxResults: count,
        maxContentChars: config.max_content_chars,
        maxTitleChars: config.max_title_chars,
      });
    },

    async fetch(url, ctx): Promise<WebFetchResult> {
      // The URL came from the model and already passed @antler/tools-web's SSRF guard; Sofya fetches it.
      return mapSofyaFetchResult(await post("fetch", { urls: [url] }, ctx), url, config.max_fetch_chars);
    },
  };
}
