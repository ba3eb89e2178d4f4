import { AsyncLocalStorage } from "node:async_hooks";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * `@tavily/core` turns an HTTP error into `new Error(body.detail.error)`: the status code is gone, so 401, 429
 * and 500 would look alike. It also takes no fetch, headers or AbortSignal. To keep the tool layer's uniform
 * handling (401 → "key missing or wrong", 429/5xx → retry, timeouts cancel) the provider hooks the SDK's own
 * axios copy: one request and one response interceptor, installed once on first use. Inside a Tavily call
 * (an AsyncLocalStorage scope) they add X-Trace-Id and the call's signal, and record the status, Retry-After
 * and body of a failed response. Outside a Tavily call they do nothing and pass everything through unchanged.
 */

export interface CapturedHttpFailure {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

interface CallRecord {
  failure?: CapturedHttpFailure;
  traceId?: string | undefined;
  signal?: AbortSignal | undefined;
}

const calls = new AsyncLocalStorage<CallRecord>();
const INSTALLED = Symbol.for("antler.tools-tavily.status-interceptor");

interface AxiosRequestLike {
  headers?: { set?(name: string, value: string): unknown } & Record<string, unknown>;
  signal?: unknown;
}

interface AxiosLike {
  interceptors: {
    request: { use(onFulfilled: (config: AxiosRequestLike) => AxiosRequestLike): number };
    response: { use(onFulfilled: (r: unknown) => unknown, onRejected: (e: unknown) => unknown): number };
  };
  [INSTALLED]?: boolean;
}

let installing: Promise<void> | undefined;

/** Loads the axios module `@tavily/core` itself imports (same file, so the same default instance). */
async function sdkAxios(): Promise<AxiosLike> {
  const require = createRequire(import.meta.url);
  const sdkEntry = require.resolve("@tavily/core");
  const axiosDir = dirname(createRequire(sdkEntry).resolve("axios/package.json"));
  // The SDK's ESM build imports "axios", whose ESM entry is index.js.
  const mod = (await import(pathToFileURL(join(axiosDir, "index.js")).href)) as { default: AxiosLike };
  return mod.default;
}

function ensureInterceptor(): Promise<void> {
  installing ??= (async () => {
    const axios = await sdkAxios();
    if (axios[INSTALLED]) return;
    axios[INSTALLED] = true;
    // Inside a Tavily call: stamp X-Trace-Id and attach the call's signal, so a timeout really cancels the request.
    axios.interceptors.request.use((config) => {
      const record = calls.getStore();
      if (!record) return config;
      if (record.traceId && config.headers) {
        if (typeof config.headers.set === "function") config.headers.set("X-Trace-Id", record.traceId);
        else config.headers["X-Trace-Id"] = record.traceId;
      }
      if (record.signal && config.signal === undefined) config.signal = record.signal;
      return config;
    });
    axios.interceptors.response.use(
      (response) => response,
      (error: unknown) => {
        const record = calls.getStore();
        const response = (error as { response?: { status?: unknown; headers?: Record<string, unknown>; data?: unknown } } | null)?.response;
        if (record && response && typeof response.status === "number") {
          const retryAfter = response.headers?.["retry-after"];
          record.failure = {
            status: response.status,
            retryAfter: typeof retryAfter === "string" ? retryAfter : undefined,
            body: typeof response.data === "string" ? response.data : JSON.stringify(response.data ?? ""),
          };
        }
        return Promise.reject(error);
      },
    );
  })();
  return installing;
}

/** Runs `fn` (an SDK call) and returns its result, or its error together with the HTTP failure behind it. */
export async function withHttpStatus<T>(
  fn: () => Promise<T>,
  scope: { traceId?: string | undefined; signal?: AbortSignal | undefined } = {},
): Promise<{ ok: true; value: T } | { ok: false; error: unknown; failure: CapturedHttpFailure | undefined }> {
  await ensureInterceptor();
  const record: CallRecord = { traceId: scope.traceId, signal: scope.signal };
  return calls.run(record, async () => {
    try {
      return { ok: true as const, value: await fn() };
    } catch (error) {
      return { ok: false as const, error, failure: record.failure };
    }
  });
}
