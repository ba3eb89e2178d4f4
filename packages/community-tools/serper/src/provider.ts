import {
  endpoint,
  type ImageSearchResult,
  readJson,
  requireApiKey,
  type WebCallContext,
  type WebSearchProvider,
  type WebSearchResult,
} from "@antler/tools-web/provider";
import { SERPER_API_KEY_ENV, SERPER_MAX_NUM, type SerperConfig } from "./config.js";
import { mapSerperImageResults, mapSerperSearchResults } from "./mapping.js";

export const SERPER_PROVIDER_NAME = "serper";

export interface SerperProviderOptions {
  /** Where `SERPER_API_KEY` is looked up. Default `process.env`, read at call time. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Config path named in errors. */
  readonly where?: string;
}

/** Serper (Google results): `POST {base_url}/search` and `POST {base_url}/images` with a JSON body, `X-API-KEY` auth. */
export function createSerperProvider(config: SerperConfig, options: SerperProviderOptions = {}): WebSearchProvider {
  const apiKey = (): string =>
    requireApiKey({
      configured: config.api_key,
      envVar: SERPER_API_KEY_ENV,
      env: options.env,
      vendor: "Serper",
      where: options.where ?? "plugins[@antler/tools-serper].config.api_key",
      keyPage: "https://serper.dev/api-key",
    });

  const post = async (path: string, query: string, num: number, ctx: WebCallContext): Promise<unknown> => {
    const body: Record<string, unknown> = { q: query, num };
    if (config.gl) body.gl = config.gl;
    if (config.hl) body.hl = config.hl;
    if (config.location) body.location = config.location;
    // The vendor's API at the configured base URL: operator configuration, so `vendorFetch` (trace id, signal, no
    // SSRF screening). Without it, the guarded fetch is the safe fallback.
    const response = await (ctx.vendorFetch ?? ctx.fetch)(endpoint(config.base_url, path), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", "x-api-key": apiKey() },
      body: JSON.stringify(body),
      signal: ctx.signal,
    });
    return readJson(SERPER_PROVIDER_NAME, response);
  };

  const count = (maxResults: number) => Math.max(1, Math.min(maxResults, config.max_results, SERPER_MAX_NUM));

  return {
    name: SERPER_PROVIDER_NAME,
    apiKeyEnv: SERPER_API_KEY_ENV,

    async search(query, { maxResults }, ctx): Promise<WebSearchResult[]> {
      const num = count(maxResults);
      return mapSerperSearchResults(await post("search", query, num, ctx), {
        maxResults: num,
        maxSnippetChars: config.max_snippet_chars,
        maxTitleChars: config.max_title_chars,
        includeAnswerBox: config.include_answer_box,
      });
    },

    async images(query, { maxResults }, ctx): Promise<ImageSearchResult[]> {
      const num = count(maxResults);
      return mapSerperImageResults(await post("images", query, num, ctx), { maxResults: num, maxTitleChars: config.max_title_chars });
    },
  };
}
