import { AntlerError, ErrorCodes, getCurrentTraceId, stampTraceHeaders } from "@antler/kernel";
import type { z } from "zod";
import { genericEnvelopeSchema, provisionerErrorBodySchema, validationErrorBodySchema } from "./api.js";

export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface HttpEndpointOptions {
  /** Base URL of the service, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Defaults to `globalThis.fetch`. */
  fetch?: FetchLike;
  /** Per-request deadline in milliseconds; default 30 000. */
  timeoutMs?: number;
  /** Sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  /** Sent with every request (the sidecar relay's token header). */
  headers?: Record<string, string>;
  /** Names the service in errors, e.g. `AIO sandbox` or `sandbox provisioner`. */
  service?: string;
  /** The config path errors point at, e.g. `plugins[aio].config.provisioner_url`. */
  where?: string;
}

export interface RequestOptions {
  method?: "GET" | "POST" | "DELETE";
  body?: unknown;
  query?: Record<string, string>;
  signal?: AbortSignal;
  /** Overrides the endpoint's default deadline (long-running commands). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * One HTTP endpoint: JSON in, zod-validated JSON out, the ambient trace id as `X-Trace-Id`, and every failure
 * as a coded AntlerError (status and a hint in `details`/`hint`). Shared by the AIO client and the provisioner.
 */
export class HttpEndpoint {
  readonly baseUrl: string;
  readonly service: string;
  private readonly fetchImpl: FetchLike;
  private readonly timeoutMs: number;
  private readonly apiKey: string | undefined;
  private readonly extraHeaders: Record<string, string>;
  private readonly where: string | undefined;

  constructor(options: HttpEndpointOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch (cause) {
      throw new AntlerError(
        ErrorCodes.CONFIG_INVALID,
        `${options.service ?? "sandbox"} URL ${JSON.stringify(options.baseUrl)} is not a URL`,
        {
          where: options.where,
          hint: "Use an absolute http(s) URL such as http://127.0.0.1:8002.",
          cause,
        },
      );
    }
    this.baseUrl = url.href.replace(/\/+$/, "");
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.apiKey = options.apiKey;
    this.extraHeaders = options.headers ?? {};
    this.service = options.service ?? "sandbox";
    this.where = options.where;
  }

  async json<S extends z.ZodType>(path: string, schema: S, options: RequestOptions = {}): Promise<z.output<S>> {
    const response = await this.send(path, options, "application/json");
    const text = await response.text();
    let body: unknown;
    try {
      body = text.length === 0 ? null : JSON.parse(text);
    } catch (cause) {
      throw this.shapeError(path, options, `answered non-JSON (${truncate(text, 120)})`, cause);
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      throw this.shapeError(
        path,
        options,
        `answered an unexpected body: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`,
      );
    }
    return parsed.data;
  }

  async bytes(path: string, options: RequestOptions = {}): Promise<Uint8Array> {
    const response = await this.send(path, options, "application/octet-stream");
    return new Uint8Array(await response.arrayBuffer());
  }

  private async send(path: string, options: RequestOptions, accept: string): Promise<Response> {
    const method = options.method ?? (options.body === undefined ? "GET" : "POST");
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, v);
    const headers = new Headers({ ...this.extraHeaders, accept });
    if (options.body !== undefined) headers.set("content-type", "application/json");
    if (this.apiKey) headers.set("authorization", `Bearer ${this.apiKey}`);
    const traceId = getCurrentTraceId();
    if (traceId) stampTraceHeaders(headers, traceId);
    const deadline = AbortSignal.timeout(options.timeoutMs ?? this.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method,
        headers,
        signal,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      });
    } catch (cause) {
      if (options.signal?.aborted) {
        throw new AntlerError(ErrorCodes.RUN_CANCELLED, `${method} ${path} on the ${this.service} was cancelled`, { cause });
      }
      const timedOut = deadline.aborted;
      throw new AntlerError(
        ErrorCodes.SANDBOX_UNAVAILABLE,
        timedOut
          ? `the ${this.service} at ${this.baseUrl} did not answer ${method} ${path} within ${options.timeoutMs ?? this.timeoutMs} ms`
          : `the ${this.service} at ${this.baseUrl} is unreachable (${method} ${path}: ${describe(cause)})`,
        {
          where: this.where,
          hint: timedOut
            ? "The sandbox may be overloaded or still starting; retry, or raise acquire_timeout_seconds."
            : `Check that the ${this.service} is running and that its URL is reachable from this host.`,
          cause,
          details: { service: this.service, method, path, timedOut },
        },
      );
    }
    if (!response.ok) throw await this.statusError(response, method, path);
    return response;
  }

  private async statusError(response: Response, method: string, path: string): Promise<AntlerError> {
    const status = response.status;
    const text = await response.text().catch(() => "");
    const reason = bodyMessage(text) ?? (response.statusText || "no message");
    const what = `${method} ${path} on the ${this.service} at ${this.baseUrl} failed with HTTP ${status}: ${reason}`;
    const details = { service: this.service, method, path, status };
    if (status === 401 || status === 403) {
      return new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, what, {
        where: this.where,
        hint: "The service refused the credentials: check provisioner_api_key (or the sandbox's SANDBOX_API_KEY).",
        details,
      });
    }
    if (status === 404) {
      return new AntlerError(ErrorCodes.SANDBOX_NOT_FOUND, what, {
        where: this.where,
        hint: "The sandbox is gone (reaped or deleted) or the URL points at something else; acquire a new sandbox.",
        details,
      });
    }
    if (status === 408 || status === 429 || status >= 500) {
      return new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, what, {
        where: this.where,
        hint: "The service is overloaded or failing; retry later and check its logs.",
        details,
      });
    }
    return new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, what, {
      where: this.where,
      hint: "The service rejected the request; the sandbox image may be older than this client expects (AIO >= 1.9.3).",
      details,
    });
  }

  private shapeError(path: string, options: RequestOptions, problem: string, cause?: unknown): AntlerError {
    const method = options.method ?? (options.body === undefined ? "GET" : "POST");
    return new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, `${method} ${path} on the ${this.service} at ${this.baseUrl} ${problem}`, {
      where: this.where,
      hint: "The service speaks a different API version than this client; use an AIO image >= 1.9.3 or update @antler/sandbox-aio.",
      cause,
      details: { service: this.service, method, path },
    });
  }
}

function bodyMessage(text: string): string | undefined {
  if (!text) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return truncate(text, 200);
  }
  const provisioner = provisionerErrorBodySchema.safeParse(body);
  if (provisioner.success) return provisioner.data.detail;
  const validation = validationErrorBodySchema.safeParse(body);
  if (validation.success) return validation.data.detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; ");
  const envelope = genericEnvelopeSchema.safeParse(body);
  if (envelope.success && envelope.data.message) return envelope.data.message;
  return truncate(text, 200);
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    const code = (cause as { code?: unknown } | undefined)?.code;
    return typeof code === "string" ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
