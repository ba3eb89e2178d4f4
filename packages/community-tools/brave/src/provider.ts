import {
  endpoint,
  type ImageSearchResult,
  readJson,
  requireApiKey,
  type WebCallContext,
  WebProviderHttpError,
  type WebSearchProvider,
  type WebSearchResult,
} from "@antler/tools-web/provider";
import { BRAVE_API_KEY_ENV, BRAVE_MAX_IMAGE_COUNT, BRAVE_MAX_WEB_COUNT, type BraveConfig } from "./config.js";
import { mapBraveImageResults, mapBraveWebResults } from "./mapping.js";

export const BRAVE_PROVIDER_NAME = "brave";

/**
 * Seconds until Brave lets the caller in again, from its rate-limit headers, for a 429 without Retry-After.
 * Brave reports one value per window (per second, per month), e.g. `X-RateLimit-Reset: 1, 1419704` with
 * `X-RateLimit-Remaining: 0, 1983`: the wait is the reset of the exhausted window (the longest, if several are),
 * so an exhausted monthly quota is reported at once instead of being retried.
 */
export function braveRateLimitWait(headers: Headers): number | undefined {
  const numbers = (name: string) =>
    headers
      .get(name)
      ?.split(",")
      .map((part) => Number(part.trim()));
  const reset = numbers("x-ratelimit-reset");
  if (!reset?.length || reset.some((n) => !Number.isFinite(n) || n < 0)) return undefined;
  const remaining = numbers("x-ratelimit-remaining");
  const exhausted = reset.filter((_, i) => remaining?.[i] === 0);
  return exhausted.length ? Math.max(...exhausted) : reset[0];
}

export interface BraveProviderOptions {
  /** Where `BRAVE_SEARCH_API_KEY` is looked up. Default `process.env`, read at call time. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Config path named in errors. */
  readonly where?: string;
}

/**
 * Brave Search API: `GET {base_url}/web/search` and `GET {base_url}/images/search`, authenticated with the
 * `X-Subscription-Token` header.
 */
export function createBraveProvider(config: BraveConfig, options: BraveProviderOptions = {}): WebSearchProvider {
  const apiKey = (): string =>
    requireApiKey({
      configured: config.api_key,
      envVar: BRAVE_API_KEY_ENV,
      env: options.env,
      vendor: "Brave Search",
      where: options.where ?? "plugins[@antler/tools-brave].config.api_key",
      keyPage: "https://api-dashboard.search.brave.com",
    });

  const get = async (path: string, params: URLSearchParams, ctx: WebCallContext): Promise<unknown> => {
    const url = `${endpoint(config.base_url, path)}?${params.toString()}`;
    // The vendor's API at the configured base URL: operator configuration, so `vendorFetch` (trace id, signal, no
    // SSRF screening). Without it, the guarded fetch is the safe fallback.
    const response = await (ctx.vendorFetch ?? ctx.fetch)(url, {
      method: "GET",
      headers: { accept: "application/json", "x-subscription-token": apiKey() },
      signal: ctx.signal,
    });
    if (response.status === 429 && !response.headers.get("retry-after")) {
      const wait = braveRateLimitWait(response.headers);
      if (wait !== undefined) {
        const body = (await response.text().catch(() => "")).slice(0, 2048).trim();
        throw new WebProviderHttpError(BRAVE_PROVIDER_NAME, 429, body, wait);
      }
    }
    return readJson(BRAVE_PROVIDER_NAME, response);
  };

  const common = (query: string, count: number, safesearch: string): URLSearchParams => {
    const params = new URLSearchParams({ q: query, count: String(count), safesearch });
    if (config.country) params.set("country", config.country);
    if (config.search_lang) params.set("search_lang", config.search_lang);
    return params;
  };

  return {
    name: BRAVE_PROVIDER_NAME,
    apiKeyEnv: BRAVE_API_KEY_ENV,

    async search(query, { maxResults }, ctx): Promise<WebSearchResult[]> {
      const count = Math.max(1, Math.min(maxResults, config.max_results, BRAVE_MAX_WEB_COUNT));
      const params = common(query, count, config.safesearch);
      // Plain text instead of <strong> markup; the mapper strips tags anyway, for older API versions.
      params.set("text_decorations", "false");
      params.set("result_filter", "web");
      if (config.extra_snippets) params.set("extra_snippets", "true");
      const body = await get("web/search", params, ctx);
      return mapBraveWebResults(body, {
        maxResults: count,
        maxSnippetChars: config.max_snippet_chars,
        maxTitleChars: config.max_title_chars,
        extraSnippets: config.extra_snippets,
      });
    },

    async images(query, { maxResults }, ctx): Promise<ImageSearchResult[]> {
      const count = Math.max(1, Math.min(maxResults, config.max_results, BRAVE_MAX_IMAGE_COUNT));
      // The image endpoint accepts only off and strict.
      const params = common(query, count, config.safesearch === "off" ? "off" : "strict");
      const body = await get("images/search", params, ctx);
      return mapBraveImageResults(body, { maxResults: count, maxTitleChars: config.max_title_chars });
    },
  };
}
