import { endpoint, readJson, requireApiKey, type WebSearchProvider, type WebSearchResult } from "@antler/tools-web/provider";
import { SERPLY_API_KEY_ENV, SERPLY_MAX_NUM, type SerplyConfig } from "./config.js";
import { mapSerplySearchResults } from "./mapping.js";

export const SERPLY_PROVIDER_NAME = "serply";

export interface SerplyProviderOptions {
  /** Where `SERPLY_API_KEY` is looked up. Default `process.env`, read at call time. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Config path named in errors. */
  readonly where?: string;
}

/**
 * The search parameters as Serply takes them: form-encoded in the last path segment (`/search/q=a+b&num=5`),
 * not after a `?`. Order is fixed so a request is reproducible.
 */
export function serplySearchPath(query: string, num: number, config: Pick<SerplyConfig, "gl" | "hl" | "lr">): string {
  const params = new URLSearchParams({ q: query, num: String(num) });
  if (config.gl) params.set("gl", config.gl);
  if (config.hl) params.set("hl", config.hl);
  if (config.lr) params.set("lr", config.lr);
  return `search/${params.toString()}`;
}

/** Serply (Google results): `GET {base_url}/search/<form-encoded params>` with `X-Api-Key` auth. */
export function createSerplyProvider(config: SerplyConfig, options: SerplyProviderOptions = {}): WebSearchProvider {
  const apiKey = (): string =>
    requireApiKey({
      configured: config.api_key,
      envVar: SERPLY_API_KEY_ENV,
      env: options.env,
      vendor: "Serply",
      where: options.where ?? "plugins[@antler/tools-serply].config.api_key",
      keyPage: "https://app.serply.io",
    });

  return {
    name: SERPLY_PROVIDER_NAME,
    apiKeyEnv: SERPLY_API_KEY_ENV,

    async search(query, { maxResults }, ctx): Promise<WebSearchResult[]> {
      const num = Math.max(1, Math.min(maxResults, config.max_results, SERPLY_MAX_NUM));
      const headers: Record<string, string> = { accept: "application/json", "x-api-key": apiKey(), "x-user-agent": config.device };
      if (config.proxy_location) headers["x-proxy-location"] = config.proxy_location;
      // The vendor's API at the configured base URL is operator configuration: `vendorFetch`, not SSRF-screened.
      const response = await (ctx.vendorFetch ?? ctx.fetch)(endpoint(config.base_url, serplySearchPath(query, num, config)), {
        method: "GET",
        headers,
        signal: ctx.signal,
      });
      return mapSerplySearchResults(await readJson(SERPLY_PROVIDER_NAME, response), {
        maxResults: num,
        maxSnippetChars: config.max_snippet_chars,
        maxTitleChars: config.max_title_chars,
      });
    },
  };
}
