import {
  capText,
  type ImageSearchResult,
  parseRetryAfter,
  trimBaseUrl,
  type WebCallContext,
  type WebFetchResult,
  WebProviderHttpError,
  type WebSearchProvider,
  type WebSearchResult,
} from "@antler/tools-web/provider";
import { TAVILY_API_KEY_ENV, type TavilyConfig } from "./config.js";
import { withHttpStatus } from "./http-status.js";

export const TAVILY_PROVIDER = "tavily";

function detailOf(body: string): string {
  try {
    const json = JSON.parse(body) as { detail?: { error?: unknown } | string; error?: unknown };
    if (typeof json.detail === "string") return json.detail;
    if (typeof json.detail?.error === "string") return json.detail.error;
    if (typeof json.error === "string") return json.error;
  } catch {
    // not JSON: use the text
  }
  return body;
}

export interface TavilyProviderOptions {
  /** Where the key comes from when `api_key` is not configured. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

/**
 * The Tavily provider, through `@tavily/core`: `search` for web_search (and image_search, from the images
 * Tavily returns with a search), `extract` (Markdown) for web_fetch.
 */
export function createTavilyProvider(config: TavilyConfig, options: TavilyProviderOptions = {}): WebSearchProvider {
  // The SDK (and axios) loads with the first call, not with the plugin entry.
  const client = async () => {
    const apiKey = config.api_key ?? (options.env ?? process.env)[TAVILY_API_KEY_ENV];
    if (!apiKey) {
      // Without a key the SDK silently switches to its rate-limited keyless mode; Antler asks for a key instead.
      throw new Error(`no API key: set the ${TAVILY_API_KEY_ENV} environment variable or api_key in the @antler/tools-tavily config`);
    }
    const { tavily } = await import("@tavily/core");
    return tavily({ apiKey, ...(config.base_url ? { apiBaseURL: trimBaseUrl(config.base_url) } : {}), clientSource: "antler" });
  };

  async function call<T>(ctx: WebCallContext, fn: () => Promise<T>): Promise<T> {
    const result = await withHttpStatus(fn, { traceId: ctx.traceId, signal: ctx.signal });
    if (result.ok) return result.value;
    if (result.failure) {
      throw new WebProviderHttpError(
        TAVILY_PROVIDER,
        result.failure.status,
        detailOf(result.failure.body),
        parseRetryAfter(result.failure.retryAfter),
      );
    }
    throw result.error;
  }

  const searchOptions = (maxResults: number) => ({
    maxResults: Math.min(maxResults, config.max_results),
    searchDepth: config.search_depth,
    topic: config.topic,
    includeAnswer: false,
    includeRawContent: false as const,
    timeout: config.request_timeout_seconds,
    ...(config.time_range ? { timeRange: config.time_range } : {}),
    ...(config.include_domains ? { includeDomains: config.include_domains } : {}),
    ...(config.exclude_domains ? { excludeDomains: config.exclude_domains } : {}),
  });

  return {
    name: TAVILY_PROVIDER,
    apiKeyEnv: TAVILY_API_KEY_ENV,
    async search(query, { maxResults }, ctx): Promise<WebSearchResult[]> {
      const sdk = await client();
      const answer = await call(ctx, () => sdk.search(query, searchOptions(maxResults)));
      return answer.results.slice(0, Math.min(maxResults, config.max_results)).map((r) => ({
        title: r.title || r.url,
        url: r.url,
        snippet: capText((r.content ?? "").trim(), config.max_snippet_chars),
        publishedAt: r.publishedDate || undefined,
      }));
    },
    async images(query, { maxResults }, ctx): Promise<ImageSearchResult[]> {
      const sdk = await client();
      const answer = await call(ctx, () =>
        sdk.search(query, { ...searchOptions(maxResults), includeImages: true, includeImageDescriptions: true }),
      );
      return answer.images
        .filter((img) => typeof img.url === "string" && img.url !== "")
        .slice(0, Math.min(maxResults, config.max_results))
        .map((img) => ({ title: img.description?.trim() || query, imageUrl: img.url }));
    },
    async fetch(url, ctx): Promise<WebFetchResult> {
      const sdk = await client();
      const answer = await call(ctx, () =>
        sdk.extract([url], {
          format: "markdown",
          extractDepth: config.extract_depth,
          includeImages: false,
          timeout: config.request_timeout_seconds,
        }),
      );
      const page = answer.results.find((r) => r.url === url) ?? answer.results[0];
      if (!page) {
        const failed = answer.failedResults.find((f) => f.url === url) ?? answer.failedResults[0];
        throw new Error(`Tavily could not extract ${url}${failed?.error ? `: ${failed.error}` : ""}`);
      }
      const title = (page as { title?: string | null }).title ?? undefined;
      return {
        url: page.url || url,
        title: title || undefined,
        content: capText(page.rawContent ?? "", config.max_content_chars),
        format: "markdown",
      };
    },
  };
}
