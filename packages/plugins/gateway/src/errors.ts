import { type AntlerError, ErrorCodes, isAntlerError } from "@antler/kernel";
import { RuntimeErrorCodes } from "@antler/plugin-runtime";

/** An HTTP-level failure the gateway answers itself (auth, bad JSON, limits): a status and a coded JSON body. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const GatewayErrorCodes = {
  UNAUTHENTICATED: "ANTLER_ERR_GATEWAY_UNAUTHENTICATED",
  FORBIDDEN: "ANTLER_ERR_GATEWAY_FORBIDDEN",
  BAD_JSON: "ANTLER_ERR_GATEWAY_BAD_JSON",
  INVALID_REQUEST: "ANTLER_ERR_GATEWAY_INVALID_REQUEST",
  PAYLOAD_TOO_LARGE: "ANTLER_ERR_GATEWAY_PAYLOAD_TOO_LARGE",
  /** A body within the byte limit that passes a shape limit (nesting depth, key count, value size): 400. */
  LIMIT_EXCEEDED: "ANTLER_ERR_GATEWAY_LIMIT_EXCEEDED",
  METHOD_NOT_ALLOWED: "ANTLER_ERR_GATEWAY_METHOD_NOT_ALLOWED",
  /** The Host header is neither a loopback name nor in `allowed_hosts` (DNS rebinding): 421. */
  HOST_NOT_ALLOWED: "ANTLER_ERR_GATEWAY_HOST_NOT_ALLOWED",
  /** `auth.mode: none`: a browser request from another page (`Origin`, `Sec-Fetch-Site`): 403. */
  CROSS_SITE_REQUEST: "ANTLER_ERR_GATEWAY_CROSS_SITE_REQUEST",
  /** `auth.mode: none`: a JSON route's body without `Content-Type: application/json`: 415. */
  UNSUPPORTED_MEDIA_TYPE: "ANTLER_ERR_GATEWAY_UNSUPPORTED_MEDIA_TYPE",
  /** Node's HTTP parser refused the request (bad header bytes, oversized headers) before any route saw it. */
  MALFORMED_REQUEST: "ANTLER_ERR_GATEWAY_MALFORMED_REQUEST",
  NOT_FOUND: "ANTLER_ERR_GATEWAY_NOT_FOUND",
  UNAVAILABLE: "ANTLER_ERR_GATEWAY_UNAVAILABLE",
  /** The run event log no longer holds the events a join asked for (retention, max_events_per_run): 410. */
  RUN_EVENTS_EXPIRED: "ANTLER_ERR_GATEWAY_RUN_EVENTS_EXPIRED",
  /** A joined run ended without its last events in the log (its process died): the stream's last frame. */
  RUN_EVENTS_INCOMPLETE: "ANTLER_ERR_GATEWAY_RUN_EVENTS_INCOMPLETE",
  /** `stream_bridge: none`: no run event log, so runs cannot be joined: 404. */
  RUN_EVENTS_DISABLED: "ANTLER_ERR_GATEWAY_RUN_EVENTS_DISABLED",
} as const;

const NOT_FOUND = new Set<string>([
  RuntimeErrorCodes.THREAD_NOT_FOUND,
  RuntimeErrorCodes.ARTIFACT_NOT_FOUND,
  RuntimeErrorCodes.RUN_NOT_FOUND,
  RuntimeErrorCodes.CHECKPOINT_NOT_FOUND,
  RuntimeErrorCodes.MESSAGE_NOT_FOUND,
  ErrorCodes.TOOL_NOT_FOUND,
  RuntimeErrorCodes.AGENT_NOT_FOUND,
]);
const BAD_REQUEST = new Set<string>([
  ErrorCodes.MODEL_NOT_FOUND,
  ErrorCodes.PATH_UNSAFE,
  ErrorCodes.CONTEXT_FORBIDDEN_KEY,
  ErrorCodes.CONFIG_INVALID,
  ErrorCodes.CONFIG_PARSE,
  RuntimeErrorCodes.UPLOAD_INVALID,
  RuntimeErrorCodes.AGENT_INVALID,
  RuntimeErrorCodes.RESUME_INVALID,
]);
const CONFLICT = new Set<string>([
  RuntimeErrorCodes.STATE_CONFLICT,
  RuntimeErrorCodes.THREAD_BUSY,
  ErrorCodes.RUN_CANCELLED,
  RuntimeErrorCodes.AGENT_CONFLICT,
  RuntimeErrorCodes.RUN_NOT_PAUSED,
]);

/** The HTTP status for a coded kernel error. */
export function statusForAntlerError(error: AntlerError): number {
  if (NOT_FOUND.has(error.code)) return 404;
  if (error.code === RuntimeErrorCodes.MODEL_FORBIDDEN) return 403;
  if (error.code === RuntimeErrorCodes.BUDGET_EXCEEDED) return 402;
  if (error.code === RuntimeErrorCodes.UPLOAD_INVALID && error.details.max_bytes !== undefined) return 413;
  if (BAD_REQUEST.has(error.code)) return 400;
  if (CONFLICT.has(error.code)) return 409;
  if (
    error.code === ErrorCodes.STORAGE_UNAVAILABLE ||
    error.code === RuntimeErrorCodes.RUNS_AT_CAPACITY ||
    error.code === RuntimeErrorCodes.RUN_HANDED_OVER
  )
    return 503;
  if (error.code === ErrorCodes.MODEL_CALL_FAILED) return 502;
  return 500;
}

export interface ErrorBody {
  error: { code: string; message: string; hint?: string; where?: string; details?: Record<string, unknown> };
}

/** The JSON body and status for an error the gateway knows how to answer, or `null` for anything else. */
export function describeHandledError(error: unknown): { status: number; body: ErrorBody; headers?: Record<string, string> } | null {
  if (error instanceof HttpError) {
    return {
      status: error.status,
      body: {
        error: {
          code: error.code,
          message: error.message,
          ...(error.hint ? { hint: error.hint } : {}),
          ...(error.details ? { details: error.details } : {}),
        },
      },
      headers: error.headers,
    };
  }
  if (isAntlerError(error)) {
    // The composed message repeats where and hint; the body carries them as fields instead.
    const first = error.message.split("\n")[0] ?? error.message;
    const message = error.where && first.startsWith(`${error.where}: `) ? first.slice(error.where.length + 2) : first;
    const retryAfter = error.details.retry_after_seconds;
    return {
      ...(typeof retryAfter === "number" ? { headers: { "retry-after": String(Math.ceil(retryAfter)) } } : {}),
      status: statusForAntlerError(error),
      body: {
        error: {
          code: error.code,
          message,
          ...(error.hint ? { hint: error.hint } : {}),
          ...(error.where ? { where: error.where } : {}),
          ...(Object.keys(error.details).length ? { details: error.details } : {}),
        },
      },
    };
  }
  return null;
}
