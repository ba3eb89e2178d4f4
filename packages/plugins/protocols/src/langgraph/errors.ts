// The one error shape, set of codes and error mapping of the LangGraph routes (assistants, threads, runs).
import { isAntlerError } from "@antler/kernel";
import type { GatewayReply } from "@antler/plugin-runtime/routes";
import type { z } from "zod";

/** The codes of the LangGraph routes' own refusals; the runtime's and the gateway's codes pass through unchanged. */
export const LangGraphErrorCodes = Object.freeze({
  /**
   * 422: a body, query or header the route refuses: malformed, or a field or value Antler does not support (a
   * stream mode, `rollback`, `ttl`, ...). `where` names the field; the detail says why and what to send instead.
   */
  INVALID_REQUEST: "ANTLER_ERR_LANGGRAPH_INVALID_REQUEST",
  /** 405 (or 422 for deleting a run): an operation of the LangGraph API Antler has no counterpart for. */
  UNSUPPORTED: "ANTLER_ERR_LANGGRAPH_UNSUPPORTED",
  /** 404: an assistant id that is neither the lead agent nor one of the caller's custom agents. */
  ASSISTANT_NOT_FOUND: "ANTLER_ERR_LANGGRAPH_ASSISTANT_NOT_FOUND",
  /** 409: `command.resume` on a thread that waits on no interrupt. */
  NOT_INTERRUPTED: "ANTLER_ERR_LANGGRAPH_NOT_INTERRUPTED",
});

/** The gateway's coded error fields, under `error` in a LangGraph error body. */
export interface LangGraphErrorFields {
  code: string;
  message: string;
  hint?: string;
  where?: string;
  details?: Record<string, unknown>;
}

/**
 * Every LangGraph route's error body: `detail` is what LangGraph's server answers (and what the SDK's `HTTPError`
 * shows), `error` the gateway's coded shape, so Antler clients read it one way. `X-Trace-Id` is on every answer.
 */
export interface LangGraphErrorBody {
  detail: string;
  error: LangGraphErrorFields;
}

export function langGraphErrorReply(status: number, error: LangGraphErrorFields): GatewayReply {
  const detail = error.hint ? `${error.message}. ${error.hint}` : error.message;
  const body: LangGraphErrorBody = { detail, error };
  return { status, body };
}

/** Thrown inside a LangGraph route; `withLangGraphErrors` answers it in the LangGraph shape. */
export class LangGraphError extends Error {
  constructor(
    readonly status: number,
    readonly fields: LangGraphErrorFields,
  ) {
    super(fields.message);
  }
}

/** A 422 `INVALID_REQUEST` naming the field (`where`). */
export function invalidRequest(message: string, where: string, hint?: string): LangGraphError {
  return new LangGraphError(422, { code: LangGraphErrorCodes.INVALID_REQUEST, message, where, ...(hint ? { hint } : {}) });
}

/** An operation Antler has no counterpart for: 405 unless `status` says otherwise. */
export function unsupported(message: string, hint?: string, status = 405): LangGraphError {
  return new LangGraphError(status, { code: LangGraphErrorCodes.UNSUPPORTED, message, ...(hint ? { hint } : {}) });
}

/** Parses `value` with `schema`, or throws the 422 naming the first field refused (under `prefix`, e.g. `query`). */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, prefix = "", hint?: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = [prefix, ...(issue?.path ?? []).map(String)].filter(Boolean).join(".") || "(body)";
  throw invalidRequest(`${where}: ${issue?.message ?? "invalid"}`, where, hint);
}

// Antler's coded errors the LangGraph routes answer in their shape; anything else goes on to the gateway's answer.
const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  ANTLER_ERR_THREAD_NOT_FOUND: 404,
  ANTLER_ERR_RUN_NOT_FOUND: 404,
  ANTLER_ERR_AGENT_NOT_FOUND: 404,
  ANTLER_ERR_CHECKPOINT_NOT_FOUND: 404,
  ANTLER_ERR_RUN_EVENTS_DISABLED: 404,
  ANTLER_ERR_RUN_EVENTS_EXPIRED: 410,
  ANTLER_ERR_MODEL_FORBIDDEN: 403,
  ANTLER_ERR_STATE_CONFLICT: 409,
  ANTLER_ERR_THREAD_BUSY: 409,
  ANTLER_ERR_RUN_CANCELLED: 409,
  ANTLER_ERR_AGENT_INVALID: 422,
  ANTLER_ERR_CONFIG_INVALID: 422,
  ANTLER_ERR_MODEL_NOT_FOUND: 422,
  ANTLER_ERR_PATH_UNSAFE: 422,
  ANTLER_ERR_CONTEXT_FORBIDDEN_KEY: 422,
  ANTLER_ERR_RUNS_AT_CAPACITY: 503,
};

/**
 * Runs a LangGraph handler, answering its `LangGraphError`s and Antler's coded errors (the table above) in the
 * LangGraph shape; a 503 carries `Retry-After` when the error says when to retry.
 */
export async function withLangGraphErrors(handle: () => Promise<GatewayReply>): Promise<GatewayReply> {
  try {
    return await handle();
  } catch (error) {
    if (error instanceof LangGraphError) return langGraphErrorReply(error.status, error.fields);
    const code = errorCode(error);
    const status = code === undefined ? undefined : STATUS_BY_CODE[code];
    if (code === undefined || status === undefined) throw error;
    const e = error as { message: string; hint?: string; where?: string; details?: Record<string, unknown> };
    const reply = langGraphErrorReply(status, {
      code,
      message: e.message.split("\n")[0] ?? "",
      ...(e.hint ? { hint: e.hint } : {}),
      ...(e.where ? { where: e.where } : {}),
      ...(e.details && Object.keys(e.details).length > 0 ? { details: e.details } : {}),
    });
    const retry = e.details?.retry_after_seconds;
    if (status === 503 && typeof retry === "number" && !(reply instanceof Response)) reply.headers = { "retry-after": String(retry) };
    return reply;
  }
}

/** An Antler coded error's code: the kernel's `AntlerError` or the gateway's `HttpError` (followRun throws those). */
export function errorCode(error: unknown): string | undefined {
  if (isAntlerError(error)) return error.code;
  if (
    error instanceof Error &&
    typeof (error as { code?: unknown }).code === "string" &&
    typeof (error as { status?: unknown }).status === "number"
  ) {
    return (error as unknown as { code: string }).code;
  }
  return undefined;
}
