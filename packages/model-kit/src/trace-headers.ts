import { getCurrentTraceId, stampTraceHeaders } from "@antler/kernel";

/**
 * Headers for SDKs that take fixed custom headers but no `fetch` of their own (Google's `@google/generative-ai`
 * reads its `customHeaders` with `entries()` on every request): each read adds the current trace id as
 * `X-Trace-Id` (and whatever a tracing plugin stamps). Outside a trace scope they hold only `init`.
 */
export function traceIdHeaders(init?: ConstructorParameters<typeof Headers>[0]): Headers {
  const headers = new Headers(init);
  const ownEntries = Headers.prototype.entries;
  Object.defineProperty(headers, "entries", {
    value: function* entries(this: Headers): Generator<[string, string]> {
      const stamped = new Headers([...ownEntries.call(this)]);
      const traceId = getCurrentTraceId();
      if (traceId) stampTraceHeaders(stamped, traceId);
      yield* ownEntries.call(stamped);
    },
  });
  return headers;
}
