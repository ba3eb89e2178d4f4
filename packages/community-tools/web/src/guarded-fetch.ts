import { resolveTraceId, stampTraceHeaders } from "@antler/kernel";
import type { UrlCheckOptions } from "./contract.js";
import { validatePublicHttpUrl } from "./ssrf.js";

/** A request the SSRF guard refused: the first URL or a redirect hop. */
export class SsrfBlockedError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
    /** 0 for the URL asked for, n for the n-th redirect hop, -1 for a connection refused at connect time. */
    readonly hop: number,
  ) {
    super(
      hop < 0
        ? `blocked the connection to ${url}: ${reason}`
        : hop === 0
          ? `blocked ${url}: ${reason}`
          : `blocked redirect hop ${hop} to ${url}: ${reason}`,
    );
    this.name = "SsrfBlockedError";
  }
}

export class TooManyRedirectsError extends Error {
  constructor(
    readonly url: string,
    readonly maxRedirects: number,
  ) {
    super(`more than ${maxRedirects} redirects starting at ${url}`);
    this.name = "TooManyRedirectsError";
  }
}

export interface GuardedFetchOptions extends UrlCheckOptions {
  /** The fetch underneath. Default `globalThis.fetch`. */
  readonly fetch?: typeof fetch | undefined;
  /** Redirects followed (each one re-checked) before giving up. Default 5. */
  readonly maxRedirects?: number | undefined;
  /** Per call (all hops together). Default none; the tool layer passes its own signal. */
  readonly timeoutMs?: number | undefined;
  /** Aborts every call made with this fetch (e.g. the run's signal). */
  readonly signal?: AbortSignal | undefined;
  /** Sent as `X-Trace-Id`; default: the ambient trace id at call time. */
  readonly traceId?: string | undefined;
  /** Headers added to every request unless the call sets them (e.g. `user-agent`). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /**
   * An undici dispatcher for the requests, e.g. `createPinnedDispatcher()`, which re-checks the addresses
   * each connection resolves to (DNS rebinding). Passed to fetch as `dispatcher`.
   */
  readonly dispatcher?: unknown;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

function combineSignals(signals: Array<AbortSignal | null | undefined>): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s != null);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}

/**
 * A `fetch` that screens the URL and every redirect hop with the SSRF guard (redirects are followed by hand
 * with `redirect: "manual"`), sends `X-Trace-Id`, and aborts on timeout or on the caller's signal. A refused
 * hop throws `SsrfBlockedError` before any byte is sent to that host. Credentials (`authorization`,
 * `cookie`) are dropped when a redirect leaves the original origin.
 *
 * The check resolves the host itself and the connection resolves it again, so a DNS answer that changes in
 * between (rebinding) is not covered; pin resolution at the network layer if that matters to you.
 */
export function createGuardedFetch(options: GuardedFetchOptions = {}): typeof fetch {
  const baseFetch = options.fetch ?? globalThis.fetch;
  const maxRedirects = options.maxRedirects ?? 5;
  const check: UrlCheckOptions = { allowPrivateAddresses: options.allowPrivateAddresses, lookup: options.lookup };

  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request ? input : undefined;
    let url = request ? request.url : input instanceof URL ? input.href : String(input);
    let method = (init?.method ?? request?.method ?? "GET").toUpperCase();
    let body: RequestInit["body"] = init?.body ?? (request ? await request.clone().arrayBuffer() : undefined);
    if (request && method === "GET") body = undefined;
    const headers = new Headers(request?.headers);
    for (const [k, v] of new Headers(init?.headers ?? undefined)) headers.set(k, v);
    for (const [k, v] of Object.entries(options.headers ?? {})) if (!headers.has(k)) headers.set(k, v);
    stampTraceHeaders(headers, resolveTraceId(options.traceId));
    const signal = combineSignals([
      init?.signal,
      request?.signal,
      options.signal,
      options.timeoutMs ? AbortSignal.timeout(options.timeoutMs) : undefined,
    ]);
    const firstOrigin = new URL(url).origin;

    for (let hop = 0; ; hop++) {
      signal?.throwIfAborted();
      const verdict = await validatePublicHttpUrl(url, check);
      if (!verdict.ok) throw new SsrfBlockedError(url, verdict.reason, hop);
      let response: Response;
      try {
        response = await baseFetch(verdict.url.href, {
          ...init,
          method,
          headers,
          body: body ?? null,
          redirect: "manual",
          ...(signal ? { signal } : {}),
          ...(options.dispatcher ? ({ dispatcher: options.dispatcher } as RequestInit) : {}),
        });
      } catch (err) {
        // The pinned dispatcher refused the connection: surface that refusal, not undici's "fetch failed".
        const cause = (err as { cause?: unknown } | null)?.cause;
        if (cause instanceof SsrfBlockedError) throw new SsrfBlockedError(url, cause.reason, -1);
        throw err;
      }
      const location = response.headers.get("location");
      if (!REDIRECT_STATUSES.has(response.status) || location === null) return response;
      // Drain the redirect body so the connection can be reused.
      await response.body?.cancel().catch(() => undefined);
      if (hop >= maxRedirects) throw new TooManyRedirectsError(url, maxRedirects);
      const next = new URL(location, verdict.url);
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
        if (method !== "HEAD") method = "GET";
        body = undefined;
        headers.delete("content-type");
        headers.delete("content-length");
      }
      if (next.origin !== firstOrigin) {
        headers.delete("authorization");
        headers.delete("cookie");
        headers.delete("proxy-authorization");
      }
      url = next.href;
    }
  };
  return guarded as typeof fetch;
}

/**
 * The fetch providers use for their vendor's API (`WebCallContext.vendorFetch`): `X-Trace-Id` on every
 * request and the call's signal, no SSRF screening (the base URL is operator configuration, not model input).
 */
export function createVendorFetch(
  options: { signal?: AbortSignal | undefined; traceId?: string | undefined; fetch?: typeof fetch | undefined } = {},
): typeof fetch {
  const baseFetch = options.fetch ?? globalThis.fetch;
  return ((input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    stampTraceHeaders(headers, resolveTraceId(options.traceId));
    const signal = combineSignals([init?.signal, options.signal]);
    return baseFetch(input, { ...init, headers, ...(signal ? { signal } : {}) });
  }) as typeof fetch;
}
