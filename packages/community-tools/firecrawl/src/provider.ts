import { AsyncLocalStorage } from "node:async_hooks";
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
import type Firecrawl from "@mendable/firecrawl-js";
import { FIRECRAWL_API_KEY_ENV, type FirecrawlConfig } from "./config.js";

export const FIRECRAWL_PROVIDER = "firecrawl";

interface CallScope {
  traceId: string;
  signal: AbortSignal;
  retryAfter?: string;
}

interface AxiosInstanceLike {
  interceptors: {
    request: {
      use(
        fn: (config: { headers?: { set?(k: string, v: string): unknown } & Record<string, unknown>; signal?: unknown }) => unknown,
      ): number;
    };
    response: { use(ok: (r: unknown) => unknown, fail: (e: unknown) => unknown): number };
  };
}

/**
 * The SDK keeps its axios instance private and takes no headers, signal or fetch. This client's own instance
 * (not a shared one) gets two interceptors so that, inside a call, requests carry X-Trace-Id and the call's
 * signal, and a failed response's Retry-After is kept. If a future SDK changes shape, this is skipped.
 */
function instrument(client: Firecrawl, scopes: AsyncLocalStorage<CallScope>): void {
  const instance = (client as unknown as { http?: { instance?: AxiosInstanceLike } }).http?.instance;
  if (!instance?.interceptors) return;
  instance.interceptors.request.use((config) => {
    const scope = scopes.getStore();
    if (scope && config.headers) {
      if (typeof config.headers.set === "function") config.headers.set("X-Trace-Id", scope.traceId);
      else config.headers["X-Trace-Id"] = scope.traceId;
      if (config.signal === undefined) config.signal = scope.signal;
    }
    return config;
  });
  instance.interceptors.response.use(
    (r) => r,
    (error: unknown) => {
      const scope = scopes.getStore();
      const header = (error as { response?: { headers?: Record<string, unknown> } } | null)?.response?.headers?.["retry-after"];
      if (scope && typeof header === "string") scope.retryAfter = header;
      return Promise.reject(error);
    },
  );
}

export interface FirecrawlProviderOptions {
  /** Where the key comes from when `api_key` is not configured. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** The Firecrawl provider, through `@mendable/firecrawl-js` v4 (API v2): `search` and `scrape` to Markdown. */
export function createFirecrawlProvider(config: FirecrawlConfig, options: FirecrawlProviderOptions = {}): WebSearchProvider {
  const scopes = new AsyncLocalStorage<CallScope>();
  let cached: { key: string; client: Firecrawl } | undefined;

  // The SDK (and axios) loads with the first call, not with the plugin entry.
  const client = async (): Promise<Firecrawl> => {
    const apiKey = config.api_key ?? (options.env ?? process.env)[FIRECRAWL_API_KEY_ENV] ?? "";
    if (!apiKey && !config.base_url) {
      throw new Error(
        `no API key: set the ${FIRECRAWL_API_KEY_ENV} environment variable or api_key in the @antler/tools-firecrawl config (a self-hosted base_url needs none)`,
      );
    }
    if (cached?.key === apiKey) return cached.client;
    // maxRetries 1: @antler/tools-web owns retries, so 5xx are not retried twice over.
    const { default: FirecrawlClient } = await import("@mendable/firecrawl-js");
    const created = new FirecrawlClient({
      apiKey,
      apiUrl: config.base_url ? trimBaseUrl(config.base_url) : "https://api.firecrawl.dev",
      maxRetries: 1,
      timeoutMs: config.request_timeout_ms + 5000,
    });
    instrument(created, scopes);
    cached = { key: apiKey, client: created };
    return created;
  };

  async function call<T>(ctx: WebCallContext, fn: (sdk: Firecrawl) => Promise<T>): Promise<T> {
    const sdk = await client();
    const scope: CallScope = { traceId: ctx.traceId, signal: ctx.signal };
    try {
      return await scopes.run(scope, () => fn(sdk));
    } catch (err) {
      const status = (err as { status?: unknown } | null)?.status;
      if (typeof status === "number" && status >= 400) {
        throw new WebProviderHttpError(
          FIRECRAWL_PROVIDER,
          status,
          err instanceof Error ? err.message : String(err),
          parseRetryAfter(scope.retryAfter),
        );
      }
      throw err;
    }
  }

  const searchRequest = (maxResults: number, source: "web" | "images") => ({
    limit: Math.min(maxResults, config.max_results),
    sources: [source] as Array<"web" | "images">,
    timeout: config.request_timeout_ms,
    ...(config.country ? { country: config.country } : {}),
    ...(config.location ? { location: config.location } : {}),
    ...(config.tbs ? { tbs: config.tbs } : {}),
    ...(config.include_domains ? { includeDomains: config.include_domains } : {}),
    ...(config.exclude_domains ? { excludeDomains: config.exclude_domains } : {}),
  });

  return {
    name: FIRECRAWL_PROVIDER,
    apiKeyEnv: FIRECRAWL_API_KEY_ENV,
    async search(query, { maxResults }, ctx): Promise<WebSearchResult[]> {
      const data = await call(ctx, (sdk) => sdk.search(query, searchRequest(maxResults, "web")));
      const out: WebSearchResult[] = [];
      for (const item of data.web ?? []) {
        const r = item as {
          url?: string;
          title?: string;
          description?: string;
          markdown?: string;
          metadata?: { title?: string; url?: string; sourceURL?: string };
        };
        const url = r.url ?? r.metadata?.url ?? r.metadata?.sourceURL;
        if (!url) continue;
        out.push({
          title: r.title || r.metadata?.title || url,
          url,
          snippet: capText((r.description ?? r.markdown ?? "").trim(), config.max_snippet_chars),
        });
      }
      return out.slice(0, Math.min(maxResults, config.max_results));
    },
    async images(query, { maxResults }, ctx): Promise<ImageSearchResult[]> {
      const data = await call(ctx, (sdk) => sdk.search(query, searchRequest(maxResults, "images")));
      const out: ImageSearchResult[] = [];
      for (const item of data.images ?? []) {
        const r = item as { title?: string; imageUrl?: string; imageWidth?: number; imageHeight?: number; url?: string };
        if (!r.imageUrl) continue;
        out.push({ title: r.title || query, imageUrl: r.imageUrl, sourceUrl: r.url, width: r.imageWidth, height: r.imageHeight });
      }
      return out.slice(0, Math.min(maxResults, config.max_results));
    },
    async fetch(url, ctx): Promise<WebFetchResult> {
      const doc = await call(ctx, (sdk) =>
        sdk.scrape(url, {
          formats: ["markdown"],
          onlyMainContent: config.only_main_content,
          timeout: config.request_timeout_ms,
          autoResume: false,
          ...(config.max_age_ms === undefined ? {} : { maxAge: config.max_age_ms }),
        }),
      );
      const meta = (doc.metadata ?? {}) as { title?: string; url?: string; sourceURL?: string; statusCode?: number; error?: string | null };
      if (typeof meta.statusCode === "number" && meta.statusCode >= 400) {
        throw new Error(`Firecrawl reached ${url}, but the page answered HTTP ${meta.statusCode}${meta.error ? ` (${meta.error})` : ""}`);
      }
      return {
        url: meta.url ?? meta.sourceURL ?? url,
        title: meta.title || undefined,
        content: capText(doc.markdown ?? "", config.max_content_chars),
        format: "markdown",
      };
    },
  };
}
