import { createToken } from "@antler/kernel";

/**
 * The contract between `@antler/tools-web` (which owns the `web_search`, `web_fetch` and `image_search` tools,
 * the SSRF guard, sanitizing and extraction) and the provider packages (`@antler/tools-tavily`, ...), which only
 * speak their vendor's API. A provider plugin registers itself with `WEB_PROVIDERS`; `tools-web`'s config picks
 * which registered provider serves each tool.
 */

export interface WebSearchResult {
  readonly title: string;
  readonly url: string;
  /** Plain text or Markdown; the tool layer sanitizes and caps it. */
  readonly snippet: string;
  readonly publishedAt?: string | undefined;
}

export interface ImageSearchResult {
  readonly title: string;
  readonly imageUrl: string;
  readonly thumbnailUrl?: string | undefined;
  /** The page the image is on. */
  readonly sourceUrl?: string | undefined;
  readonly width?: number | undefined;
  readonly height?: number | undefined;
}

export interface WebFetchResult {
  /** The URL the content came from, after redirects. */
  readonly url: string;
  readonly title?: string | undefined;
  /** Markdown (providers that extract) or raw HTML (`format: "html"`, extracted by the tool layer). */
  readonly content: string;
  readonly format: "markdown" | "html" | "text";
}

/** Everything a provider call gets besides its arguments. */
export interface WebCallContext {
  /** Aborted on timeout or run cancel. Pass it to every request. */
  readonly signal: AbortSignal;
  /**
   * `fetch` that applies the SSRF guard to the URL and every redirect hop (unless the operator opted out),
   * sends `X-Trace-Id`, and honours `signal`. Providers that call a vendor API with plain HTTP use it; SDK-based
   * providers pass it to the SDK where the SDK accepts a fetch.
   */
  readonly fetch: typeof fetch;
  /**
   * `fetch` for the vendor's own API at its configured base URL: sends `X-Trace-Id` and honours `signal`, but
   * skips the SSRF guard, because the operator chose that address in config (a self-hosted SearXNG on
   * localhost, a loopback fake in tests). Use it for API calls; use `fetch` for URLs that came from the model
   * or from remote content. Always set by `@antler/tools-web`.
   */
  readonly vendorFetch?: typeof fetch | undefined;
  readonly traceId: string;
}

export interface WebSearchProvider {
  /** Registry key, as written in config: `tavily`, `brave`, ... */
  readonly name: string;
  /** The env var holding the API key, named in 401/403 messages; absent for keyless providers. */
  readonly apiKeyEnv?: string | undefined;
  search?(query: string, options: { maxResults: number }, ctx: WebCallContext): Promise<WebSearchResult[]>;
  fetch?(url: string, ctx: WebCallContext): Promise<WebFetchResult>;
  images?(query: string, options: { maxResults: number }, ctx: WebCallContext): Promise<ImageSearchResult[]>;
}

/**
 * Thrown by providers for a vendor HTTP failure, so the tool layer handles every vendor the same way:
 * 401/403 → "key missing or wrong, set $ENV", 429/5xx → retried with backoff, then reported.
 */
export class WebProviderHttpError extends Error {
  constructor(
    readonly provider: string,
    readonly status: number,
    readonly body: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(`${provider} answered HTTP ${status}${body ? `: ${body.slice(0, 300)}` : ""}`);
    this.name = "WebProviderHttpError";
  }
}

export interface WebProviderRegistry {
  add(provider: WebSearchProvider): void;
  get(name: string): WebSearchProvider | undefined;
  names(): string[];
}

export const WEB_PROVIDERS = createToken<WebProviderRegistry>("antler.web.providers");

/** The plugin that binds `WEB_PROVIDERS`; every provider plugin depends on it. */
export const WEB_TOOLS_PLUGIN_NAME = "@antler/tools-web";

/** The tools `@antler/tools-web` contributes, by name. */
export const WEB_SEARCH_TOOL = "web_search";
export const WEB_FETCH_TOOL = "web_fetch";
export const IMAGE_SEARCH_TOOL = "image_search";

export interface UrlCheckOptions {
  /** The operator's explicit opt-out (`allow_private_addresses: true`) for intentional internal targets. */
  readonly allowPrivateAddresses?: boolean | undefined;
  /** DNS lookup, replaceable for tests (a local resolver stub); defaults to `node:dns/promises` lookup with `all: true`. */
  readonly lookup?: ((hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>) | undefined;
}

export type UrlCheck =
  | { readonly ok: true; readonly url: URL; readonly addresses: readonly string[] }
  | { readonly ok: false; readonly reason: string };

/** Signature of the SSRF guard `validatePublicHttpUrl`, implemented in `src/ssrf.ts` and exported from the package index. */
export type ValidatePublicHttpUrl = (url: string | URL, options?: UrlCheckOptions) => Promise<UrlCheck>;
