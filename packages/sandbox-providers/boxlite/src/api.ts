import { randomUUID } from "node:crypto";
import { AntlerError, ErrorCodes } from "@antler/kernel";
import { BOXLITE_API_KEY_ENV } from "./config.js";

export interface BoxLiteApiOptions {
  /** Base URL up to and including `/v1`. */
  apiUrl: string;
  prefix: string;
  /** The bearer token, or where to find it: read on each request, so a key set after boot is picked up. */
  apiKey: () => string | undefined;
  requestTimeoutMs: number;
  maxRetries: number;
  /** First retry delay; doubles per attempt. Default 200 ms. */
  retryBaseMs?: number;
  /** Where to place the config in messages, e.g. `plugins[2].config`. */
  where: string;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  body?: Uint8Array;
  contentType?: string;
  accept?: string;
  /** No per-request timeout (a stream that lasts as long as a command). */
  stream?: boolean;
  /** Answer these statuses instead of throwing (e.g. 404 for "does it exist"). */
  allow?: readonly number[];
  signal?: AbortSignal | undefined;
}

const RETRIED_STATUSES = new Set([429, 500, 502, 503, 504]);

/** BoxLite's error envelope: `{ error: { message, type, code } }`. */
interface ErrorEnvelope {
  error?: { message?: string; type?: string; code?: number };
}

function describe(status: number, text: string): string {
  try {
    const parsed = JSON.parse(text) as ErrorEnvelope;
    if (parsed.error?.message) return `${status} ${parsed.error.type ?? "Error"}: ${parsed.error.message}`;
  } catch {
    // not the envelope: show the text
  }
  return `${status}${text.trim() ? `: ${text.trim().slice(0, 300)}` : ""}`;
}

/**
 * BoxLite's REST API (`/v1/{prefix}/...`, bearer auth). Requests that fail with 429, 5xx, a timeout or a dropped
 * connection are retried with backoff; a POST carries an `Idempotency-Key` (the same on every retry), which the
 * API documents for exactly this, so a retried create or exec never happens twice.
 */
export class BoxLiteApi {
  constructor(readonly options: BoxLiteApiOptions) {}

  /** The API key, or CONFIG_ENV_MISSING saying where to put it. */
  requireKey(): string {
    const key = this.options.apiKey();
    if (key) return key;
    throw new AntlerError(
      ErrorCodes.CONFIG_ENV_MISSING,
      `no BoxLite API key: ${BOXLITE_API_KEY_ENV} is not set and api_key is not configured`,
      {
        where: `${this.options.where}.api_key`,
        hint: `Export ${BOXLITE_API_KEY_ENV} (the bearer token of your BoxLite service) or set api_key: \${${BOXLITE_API_KEY_ENV}} in the plugin config.`,
      },
    );
  }

  url(path: string, query: RequestOptions["query"] = {}): string {
    const url = new URL(`${this.options.apiUrl.replace(/\/+$/, "")}/${encodeURIComponent(this.options.prefix)}${path}`);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.href;
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const key = this.requireKey();
    const url = this.url(path, options.query);
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (options.accept) headers.accept = options.accept;
    if (method === "POST") headers["idempotency-key"] = randomUUID();
    let body: RequestInit["body"];
    if (options.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.json);
    } else if (options.body !== undefined) {
      headers["content-type"] = options.contentType ?? "application/octet-stream";
      body = options.body as unknown as RequestInit["body"];
    }
    const attempts = this.options.maxRetries + 1;
    let last = "";
    for (let attempt = 1; attempt <= attempts; attempt++) {
      options.signal?.throwIfAborted();
      if (attempt > 1) await sleep((this.options.retryBaseMs ?? 200) * 2 ** (attempt - 2), options.signal);
      const signals = [options.signal, options.stream ? undefined : AbortSignal.timeout(this.options.requestTimeoutMs)].filter(
        (s): s is AbortSignal => s !== undefined,
      );
      let response: Response;
      try {
        response = await fetch(url, { method, headers, body, signal: signals.length ? AbortSignal.any(signals) : undefined });
      } catch (err) {
        if (options.signal?.aborted) throw err;
        const timedOut = (err as Error)?.name === "TimeoutError";
        last = timedOut ? `no answer within ${this.options.requestTimeoutMs} ms (request_timeout_ms)` : `${(err as Error)?.message ?? err}`;
        continue;
      }
      if (response.ok || options.allow?.includes(response.status)) return response;
      const text = await response.text().catch(() => "");
      if (RETRIED_STATUSES.has(response.status)) {
        last = describe(response.status, text);
        continue;
      }
      throw this.failure(method, path, response.status, text);
    }
    throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, `BoxLite ${method} ${path} failed after ${attempts} attempt(s): ${last}`, {
      where: this.options.where,
      hint: `Check that the BoxLite service at ${this.options.apiUrl} is up; max_retries and request_timeout_ms tune the retries.`,
    });
  }

  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.request(method, path, options);
    return (await response.json()) as T;
  }

  private failure(method: string, path: string, status: number, text: string): AntlerError {
    const what = `BoxLite ${method} ${path}: ${describe(status, text)}`;
    if (status === 401 || status === 403) {
      return new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, `BoxLite refused the API key (${what})`, {
        where: `${this.options.where}.api_key`,
        hint: `Set ${BOXLITE_API_KEY_ENV} (or api_key) to a valid token for ${this.options.apiUrl}, prefix ${this.options.prefix}.`,
      });
    }
    if (status === 404) return new AntlerError(ErrorCodes.SANDBOX_NOT_FOUND, what, { where: this.options.where });
    return new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, what, { where: this.options.where, details: { status } });
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** Events of a `text/event-stream` body, as they arrive. */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, "\n");
    let split = buffer.indexOf("\n\n");
    while (split !== -1) {
      const raw = buffer.slice(0, split);
      buffer = buffer.slice(split + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of raw.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) yield { event, data: data.join("\n") };
      split = buffer.indexOf("\n\n");
    }
  }
}
