import { isAntlerError } from "@antler/kernel";
import type { GatewayReply } from "@antler/plugin-gateway/routes";
import type { RunRecord } from "@antler/plugin-runtime";

/** Codes of the LangGraph runs routes' own refusals (the runtime's and gateway's codes pass through unchanged). */
export const LangGraphRunErrorCodes = Object.freeze({
  /** The body does not validate, or names a value the API has but Antler cannot honour (a stream mode, rollback). */
  INVALID_RUN: "ANTLER_ERR_LANGGRAPH_INVALID_RUN",
  /** `command.resume` on a thread that waits on no interrupt. */
  NOT_INTERRUPTED: "ANTLER_ERR_LANGGRAPH_NOT_INTERRUPTED",
  /** An `assistant_id` that is neither the lead agent nor one of the caller's custom agents. */
  ASSISTANT_NOT_FOUND: "ANTLER_ERR_LANGGRAPH_ASSISTANT_NOT_FOUND",
  /** A LangGraph operation Antler has no counterpart for (deleting one run record). */
  UNSUPPORTED: "ANTLER_ERR_LANGGRAPH_UNSUPPORTED",
});

export interface LangGraphErrorFields {
  code: string;
  message: string;
  hint?: string;
  where?: string;
  details?: Record<string, unknown>;
}

/**
 * A LangGraph-route error: `detail` is what LangGraph's server answers (and what the SDK's `HTTPError` message
 * shows), `error` is the gateway's coded shape, so Antler clients read it one way.
 */
export function langGraphErrorReply(status: number, error: LangGraphErrorFields): GatewayReply {
  const detail = error.hint ? `${error.message}. ${error.hint}` : error.message;
  return { status, body: { detail, error } };
}

/** Thrown inside the runs routes; `handleLangGraphErrors` answers it in the LangGraph shape. */
export class LangGraphRunError extends Error {
  constructor(
    readonly status: number,
    readonly fields: LangGraphErrorFields,
  ) {
    super(fields.message);
  }
}

export const invalidRun = (message: string, where: string, hint?: string) =>
  new LangGraphRunError(422, { code: LangGraphRunErrorCodes.INVALID_RUN, message, where, ...(hint ? { hint } : {}) });

// The runtime's codes the routes answer in the LangGraph shape; anything else is left to the gateway.
const STATUS_BY_CODE: Record<string, number> = {
  ANTLER_ERR_THREAD_NOT_FOUND: 404,
  ANTLER_ERR_RUN_NOT_FOUND: 404,
  ANTLER_ERR_AGENT_NOT_FOUND: 404,
  ANTLER_ERR_RUN_EVENTS_DISABLED: 404,
  ANTLER_ERR_RUN_EVENTS_EXPIRED: 410,
  ANTLER_ERR_MODEL_FORBIDDEN: 403,
  ANTLER_ERR_MODEL_NOT_FOUND: 422,
  ANTLER_ERR_CONFIG_INVALID: 422,
  ANTLER_ERR_CONTEXT_FORBIDDEN_KEY: 422,
  ANTLER_ERR_STATE_CONFLICT: 409,
  ANTLER_ERR_THREAD_BUSY: 409,
  ANTLER_ERR_RUNS_AT_CAPACITY: 503,
};

/** Runs `fn`, answering LangGraph-route errors and the runtime's coded errors in the LangGraph shape. */
export async function handleLangGraphErrors(fn: () => Promise<GatewayReply>): Promise<GatewayReply> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof LangGraphRunError) return langGraphErrorReply(error.status, error.fields);
    const code = errorCode(error);
    const status = code === undefined ? undefined : STATUS_BY_CODE[code];
    if (code === undefined || status === undefined) throw error;
    const e = error as { message: string; hint?: string; details?: Record<string, unknown> };
    const reply = langGraphErrorReply(status, {
      code,
      message: e.message.split("\n")[0] ?? "",
      ...(e.hint ? { hint: e.hint } : {}),
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

/** LangGraph's run statuses. */
export type LangGraphRunStatus = "pending" | "running" | "error" | "success" | "timeout" | "interrupted";

/** The Run object of the LangGraph API (`Run` in `@langchain/langgraph-sdk`). */
export interface LangGraphRun {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: LangGraphRunStatus;
  metadata: Record<string, unknown>;
  multitask_strategy: "reject" | "enqueue" | "interrupt" | "rollback" | null;
  kwargs: Record<string, unknown>;
}

/**
 * The run metadata key under which a LangGraph run keeps what Antler's run record has no field for: the assistant
 * id asked for and the stream modes (a join streams what the run was started with). Not shown in `Run.metadata`.
 */
export const RUN_METADATA_KEY = "langgraph";

/** The assistant id a run record was started for: its custom agent's name, or the lead agent. */
export const LEAD_AGENT_ASSISTANT_ID = "agent";

/**
 * Antler's run record → LangGraph's Run. `cancelled` is LangGraph's `interrupted` (what a cancel with
 * `action: interrupt` leaves); `endedOnInterrupt` marks a successful run that stopped on a question for the user.
 */
export function toLangGraphRun(record: RunRecord, options: { endedOnInterrupt?: boolean } = {}): LangGraphRun {
  const kwargs = record.kwargs;
  const context = isRecord(kwargs.context) ? kwargs.context : {};
  const { [RUN_METADATA_KEY]: stamp, ...metadata } = isRecord(kwargs.metadata) ? kwargs.metadata : {};
  const langgraph = isRecord(stamp) ? stamp : {};
  const strategy = kwargs.multitask_strategy;
  const agent =
    typeof langgraph.assistant_id === "string"
      ? langgraph.assistant_id
      : typeof context.agent_name === "string" && context.is_bootstrap !== true
        ? context.agent_name
        : LEAD_AGENT_ASSISTANT_ID;
  let status: LangGraphRunStatus;
  switch (record.status) {
    case "cancelled":
      status = "interrupted";
      break;
    case "success":
      status = options.endedOnInterrupt ? "interrupted" : "success";
      break;
    default:
      status = record.status;
  }
  return {
    run_id: record.run_id,
    thread_id: record.thread_id,
    assistant_id: agent,
    created_at: record.created_at,
    updated_at: record.updated_at,
    status,
    metadata,
    multitask_strategy: strategy === "reject" || strategy === "enqueue" || strategy === "interrupt" ? strategy : null,
    kwargs: {
      ...kwargs,
      metadata,
      stream_mode: Array.isArray(langgraph.stream_mode) ? langgraph.stream_mode : ["values"],
      stream_subgraphs: langgraph.stream_subgraphs === true,
      model: record.model,
      trace_id: record.trace_id,
      ...(record.error ? { error: record.error } : {}),
    },
  };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
