import { setTimeout as sleep } from "node:timers/promises";
import type { RetryConfig } from "./config.js";
import { type WebCallContext, WebProviderHttpError, type WebSearchProvider } from "./contract.js";
import { createVendorFetch, SsrfBlockedError, TooManyRedirectsError } from "./guarded-fetch.js";

/** Parses a Retry-After header (delta-seconds or an HTTP date) into seconds, or undefined. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value == null || value.trim() === "") return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, (date - now) / 1000);
}

/**
 * For providers that call their vendor with `fetch`: returns the response when it is 2xx, otherwise throws
 * `WebProviderHttpError` with the body (first 2 KB) and Retry-After, so the tool layer handles it uniformly.
 */
export async function ensureOk(provider: string, response: Response): Promise<Response> {
  if (response.ok) return response;
  let body = "";
  try {
    body = (await response.text()).slice(0, 2048);
  } catch {
    // The status is what matters; an unreadable body is not a second error.
  }
  throw new WebProviderHttpError(provider, response.status, body.trim(), parseRetryAfter(response.headers.get("retry-after")));
}

/** Thrown inside a provider call when the per-call timeout fired (as opposed to the run being cancelled). */
export class WebCallTimeoutError extends Error {
  constructor(
    readonly provider: string,
    readonly timeoutMs: number,
  ) {
    super(`${provider} did not answer within ${formatSeconds(timeoutMs)}`);
    this.name = "WebCallTimeoutError";
  }
}

function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

export interface ProviderCallOptions {
  /** The tool name, for messages: `web_search`, `web_fetch`, `image_search`. */
  readonly tool: string;
  readonly provider: WebSearchProvider;
  readonly timeoutMs: number;
  readonly retry: RetryConfig;
  /** The run's signal: when it aborts, the call is abandoned and the abort propagates (no error message). */
  readonly signal?: AbortSignal | undefined;
  readonly traceId: string;
  /** The fetch under `vendorFetch`. Default `globalThis.fetch`. */
  readonly baseFetch?: typeof fetch | undefined;
  /** Builds the fetch each try uses (the guarded fetch, bound to the try's signal). */
  makeFetch(signal: AbortSignal): typeof fetch;
  /** Where to point the operator, e.g. `plugins[@antler/tools-web].config.allow_private_addresses`. */
  readonly configHint?: string | undefined;
  /** Waits between tries; replaceable in tests. */
  readonly sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
}

export type ProviderCallResult<T> = { ok: true; value: T; attempts: number } | { ok: false; message: string; attempts: number };

function isRetryable(status: number): boolean {
  return status === 429 || status >= 500;
}

function retryDelay(attempt: number, retry: RetryConfig, retryAfterSeconds: number | undefined): number {
  if (retryAfterSeconds !== undefined) return Math.ceil(retryAfterSeconds * 1000);
  const base = retry.initial_delay_ms * 2 ** (attempt - 1);
  // Up to 25% jitter so parallel callers do not retry in lockstep.
  return Math.round(base * (1 + Math.random() * 0.25));
}

function abortPromise(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

// Connection failures that a moment later may not recur: a reset or refused connection, a socket closed under
// the request, a temporary DNS failure. A missing host (ENOTFOUND) or a TLS failure is not among them.
const TRANSIENT_NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_CLOSED",
]);

/** The code of a transient connection failure anywhere in the error's cause chain (fetch wraps it), if any. */
export function transientNetworkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && typeof current === "object"; depth++) {
    if (current instanceof WebProviderHttpError || current instanceof SsrfBlockedError) return undefined;
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && TRANSIENT_NETWORK_CODES.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The message an error ToolMessage carries for a provider failure. */
export function describeProviderFailure(
  tool: string,
  provider: WebSearchProvider,
  error: unknown,
  attempts: number,
  configHint?: string,
): string {
  const name = provider.name;
  const tries = attempts > 1 ? ` after ${attempts} tries` : "";
  if (error instanceof WebProviderHttpError) {
    const status = error.status;
    const detail = error.body ? `: ${error.body.slice(0, 300)}` : "";
    if ((status === 401 || status === 403) && provider.apiKeyEnv) {
      return `${tool} failed: ${name} rejected the API key (HTTP ${status}); the key is missing or wrong. Set the ${provider.apiKeyEnv} environment variable (or api_key in the provider's plugin config) to a valid key. This is a configuration problem; tell the user.`;
    }
    if (status === 401 || status === 403) return `${tool} failed: ${name} refused access (HTTP ${status})${detail}.`;
    if (status === 429) {
      const after = error.retryAfterSeconds !== undefined ? ` (it asked to wait ${Math.ceil(error.retryAfterSeconds)} s)` : "";
      return `${tool} failed: ${name} is rate limiting (HTTP 429)${tries}${after}. Try again later, or continue without this result.`;
    }
    if (status >= 500) return `${tool} failed: ${name} had a server error (HTTP ${status})${tries}${detail}. Try again later.`;
    return `${tool} failed: ${name} rejected the request (HTTP ${status})${detail}.`;
  }
  if (error instanceof WebCallTimeoutError) {
    return `${tool} failed: ${name} did not answer within ${formatSeconds(error.timeoutMs)} (timeout_seconds). The site or service may be slow or down; try again or use another source.`;
  }
  if (error instanceof SsrfBlockedError) {
    const hint = configHint ? ` If this internal address is intended, the operator can set ${configHint}.` : "";
    return `${tool} refused: ${error.message}. Only public http(s) addresses can be fetched.${hint}`;
  }
  if (error instanceof TooManyRedirectsError) return `${tool} failed: ${error.message}.`;
  const network = transientNetworkCode(error);
  if (network) {
    return `${tool} failed: the connection to ${name} broke (${network})${tries}. The service may be restarting or unreachable; try again later, or continue without this result.`;
  }
  const message = error instanceof Error ? error.message : String(error);
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const causeText = cause && typeof cause === "object" ? ` (${String(cause.code ?? cause.message ?? "")})` : "";
  return `${tool} failed: ${name}: ${message}${causeText}`;
}

/**
 * Runs one provider call the same way for every provider: a timeout per try, 429 and 5xx retried with
 * exponential backoff (a Retry-After is honoured up to `retry.max_delay_ms`, beyond that the failure is
 * reported at once), and every failure turned into a message for an error ToolMessage. Only the run's own
 * cancellation propagates as an exception.
 */
export async function runProviderCall<T>(
  options: ProviderCallOptions,
  call: (ctx: WebCallContext) => Promise<T>,
): Promise<ProviderCallResult<T>> {
  const wait = options.sleep ?? ((ms: number, signal?: AbortSignal) => sleep(ms, undefined, signal ? { signal } : undefined));
  const maxAttempts = Math.max(1, options.retry.attempts);
  for (let attempt = 1; ; attempt++) {
    options.signal?.throwIfAborted();
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const ctx: WebCallContext = {
      signal,
      fetch: options.makeFetch(signal),
      vendorFetch: createVendorFetch({ signal, traceId: options.traceId, fetch: options.baseFetch }),
      traceId: options.traceId,
    };
    try {
      // The race covers SDKs that ignore the signal: the call is abandoned when the timeout fires.
      const value = await Promise.race([call(ctx), abortPromise(signal)]);
      return { ok: true, value, attempts: attempt };
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      if (timeout.aborted) {
        return {
          ok: false,
          attempts: attempt,
          message: describeProviderFailure(
            options.tool,
            options.provider,
            new WebCallTimeoutError(options.provider.name, options.timeoutMs),
            attempt,
          ),
        };
      }
      const retryable = (error instanceof WebProviderHttpError && isRetryable(error.status)) || transientNetworkCode(error) !== undefined;
      if (retryable && attempt < maxAttempts) {
        const delay = retryDelay(attempt, options.retry, error instanceof WebProviderHttpError ? error.retryAfterSeconds : undefined);
        if (delay <= options.retry.max_delay_ms) {
          await wait(delay, options.signal);
          continue;
        }
      }
      return {
        ok: false,
        attempts: attempt,
        message: describeProviderFailure(options.tool, options.provider, error, attempt, options.configHint),
      };
    }
  }
}
