import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import diagnosticsChannel from "node:diagnostics_channel";
import { processWide } from "./di.js";

/** The HTTP header that carries Antler's request-level correlation id. */
export const TRACE_ID_HEADER = "X-Trace-Id";
/** The key under which the id is stamped into run metadata and runtime context. */
export const TRACE_METADATA_KEY = "antler_trace_id";
export const MAX_TRACE_ID_LENGTH = 512;

interface TraceStore {
  readonly traceId: string;
}

// Duplicate copies of @antler/kernel (two versions in one tree) must agree on the ambient id, so the single
// AsyncLocalStorage lives under a registry symbol rather than in module scope.
const storage = () => processWide("antler.trace.storage", () => new AsyncLocalStorage<TraceStore>());

export function generateTraceId(): string {
  return randomUUID().replaceAll("-", "");
}

/** Returns the id if it is usable (printable ASCII 0x20–0x7E, 1–512 chars, not blank), otherwise `null`. */
export function normalizeTraceId(value: unknown): string | null {
  if (typeof value !== "string") return null;
  if (value.length === 0 || value.length > MAX_TRACE_ID_LENGTH) return null;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return null;
  }
  if (value.trim().length === 0) return null;
  return value;
}

/** The ambient id, or `null` outside any trace scope. Only logging should need the nullable form. */
export function getCurrentTraceId(): string | null {
  return storage().getStore()?.traceId ?? null;
}

/** The ambient id; outside a scope, a fresh id (not bound anywhere). */
export function ensureTraceId(): string {
  return getCurrentTraceId() ?? generateTraceId();
}

/**
 * The first usable carrier, otherwise the ambient id, otherwise a fresh one. For ids that travel as data
 * (runtime context, metadata) across boundaries that AsyncLocalStorage does not follow.
 */
export function resolveTraceId(...carriers: unknown[]): string {
  for (const carrier of carriers) {
    const id = normalizeTraceId(carrier);
    if (id) return id;
  }
  return ensureTraceId();
}

/**
 * Runs `fn` in a trace scope for a boundary crossing or a non-HTTP entry point: the surrounding scope's id
 * first (inherit), otherwise the given id if usable, otherwise a fresh one. Inheriting first keeps layered
 * bindings (a scheduled occurrence, then its agent run; a manual trigger inside a gateway request) on one trace.
 */
export function ensureTraceContext<T>(fn: (traceId: string) => T): T;
export function ensureTraceContext<T>(traceId: string | null | undefined, fn: (traceId: string) => T): T;
export function ensureTraceContext<T>(idOrFn: string | null | undefined | ((traceId: string) => T), maybeFn?: (traceId: string) => T): T {
  const fn = typeof idOrFn === "function" ? idOrFn : maybeFn;
  if (!fn) throw new TypeError("ensureTraceContext needs a function to run");
  const requested = typeof idOrFn === "function" ? null : normalizeTraceId(idOrFn);
  const traceId = getCurrentTraceId() ?? requested ?? generateTraceId();
  return bind(traceId, fn);
}

/**
 * Runs `fn` with no ambient trace id. For starting a long-lived loop (a poller, a worker) whose units of work
 * each bind their own id: timers and promises created inside do not carry the caller's id, so a binding that
 * happens to surround the start can never tag later units of work.
 */
export function outsideTraceContext<T>(fn: () => T): T {
  return storage().exit(fn);
}

/**
 * Runs `fn` in a fresh request scope. It never inherits the surrounding id: an unusable header must not
 * fall back to whatever request ran before on this async chain. A usable id is kept; anything else is replaced.
 */
export function requestTraceContext<T>(fn: (traceId: string) => T): T;
export function requestTraceContext<T>(headerValue: unknown, fn: (traceId: string) => T): T;
export function requestTraceContext<T>(valueOrFn: unknown, maybeFn?: (traceId: string) => T): T {
  const fn = typeof valueOrFn === "function" && !maybeFn ? (valueOrFn as (traceId: string) => T) : maybeFn;
  if (!fn) throw new TypeError("requestTraceContext needs a function to run");
  const value = fn === valueOrFn ? undefined : valueOrFn;
  return bind(normalizeTraceId(value) ?? generateTraceId(), fn);
}

function bind<T>(traceId: string, fn: (traceId: string) => T): T {
  return storage().run({ traceId }, fn, traceId);
}

/**
 * A fetch for provider SDKs that stamps the ambient trace id on every request as `X-Trace-Id`, so provider-side
 * logs (or a gateway) can be joined with Antler's. Outside a trace scope the request goes out unchanged.
 */
export function fetchWithTraceId(baseFetch: typeof fetch = globalThis.fetch): typeof fetch {
  return (input, init) => {
    const traceId = getCurrentTraceId();
    if (!traceId) return baseFetch(input, init);
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    return baseFetch(input, { ...init, headers: stampTraceHeaders(headers, traceId) });
  };
}

/** Every request stamped by `stampTraceHeaders` is published here as `{ headers, traceId }` before it goes out. */
export const OUTGOING_TRACE_CHANNEL = "antler:trace:outgoing";

/** Sets `X-Trace-Id`; subscribers of `OUTGOING_TRACE_CHANNEL` may add their own (a tracing plugin's `traceparent`). */
export function stampTraceHeaders(headers: Headers, traceId: string): Headers {
  headers.set(TRACE_ID_HEADER, traceId);
  const channel = diagnosticsChannel.channel(OUTGOING_TRACE_CHANNEL);
  if (channel.hasSubscribers) channel.publish({ headers, traceId });
  return headers;
}
