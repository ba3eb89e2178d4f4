import {
  endpoint,
  readJson,
  requireApiKey,
  type WebCallContext,
  type WebFetchResult,
  type WebSearchProvider,
  type WebSearchResult,
} from "@antler/tools-web/provider";
import { EXA_API_KEY_ENV, EXA_MAX_NUM_RESULTS, type ExaConfig } from "./config.js";
import { mapExaContents, mapExaSearchResults } from "./mapping.js";

export const EXA_PROVIDER_NAME = "exa";

export interface ExaProviderOptions {
  /** Where `EXA_API_KEY` is looked up. Default `process.env`, read at call time. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Config path named in errors. */
  readonly where?: string;
}

/** Exa: `POST {base_url}/search` (with contents) for web_search, `POST {base_url}/contents` for web_fetch; `x-api-key` auth. */
export function createExaProvider(config: ExaConfig, options: ExaProviderOptions = {}): WebSearchProvider {
  const apiKey = (): string =>
    requireApiKey({
      configured: config.api_key,
      envVar: EXA_API_KEY_ENV,
      env: options.env,
      vendor: "Exa",
      where: options.where ?? "plugins[@antler/tools-exa].config.api_key",
      keyPage: "https://dashboard.exa.ai/api-keys",
    });

  const post = async (path: string, body: Record<string, unknown>, ctx: WebCallContext): Promise<unknown> => {
    // The vendor's API at the configured base URL: operator configuration, so `vendorFetch` (trace id, signal, no
    // SSRF screening). Without it, the guarded fetch is the safe fallback.
    const response = await (ctx.vendorFetch ?? ctx.fetch)(endpoint(config.base_url, path), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", "x-api-key": apiKey() },
      body: JSON.stringify(body),
      signal: ctx.signal,
    });
    return readJson(EXA_PROVIDER_NAME, response);
  };

  return {
    name: EXA_PROVIDER_NAME,
    apiKeyEnv: EXA_API_KEY_ENV,

    async search(query, { maxResults }, ctx): Promise<WebSearchResult[]> {
      const numResults = Math.max(1, Math.min(maxResults, config.max_results, EXA_MAX_NUM_RESULTS));
      // On /search the content options nest under `contents`; on /contents they are top-level.
      const contents =
        config.snippet_source === "highlights"
          ? { highlights: { maxCharacters: config.max_snippet_chars } }
          : { text: { maxCharacters: config.max_snippet_chars } };
      const body: Record<string, unknown> = { query, numResults, type: config.search_type, contents };
      if (config.include_domains?.length) body.includeDomains = config.include_domains;
      if (config.exclude_domains?.length) body.excludeDomains = config.exclude_domains;
      return mapExaSearchResults(await post("search", body, ctx), {
        maxResults: numResults,
        maxSnippetChars: config.max_snippet_chars,
        maxTitleChars: config.max_title_chars,
      });
    },

    async fetch(url, ctx): Promise<WebFetchResult> {
      const body: Record<string, unknown> = { urls: [url], text: { maxCharacters: config.fetch_max_chars } };
      if (config.max_age_hours !== undefined) body.maxAgeHours = config.max_age_hours;
      return mapExaContents(await post("contents", body, ctx), url);
    },
  };
}
