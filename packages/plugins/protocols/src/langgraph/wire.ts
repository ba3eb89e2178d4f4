// Shared by the LangGraph routes (assistants, threads, runs): the error replies the SDK reads, the thread JSON,
// and a thread's status and pending interrupt, all derived from Antler's own threads, runs and checkpoints.
import { isAntlerError } from "@antler/kernel";
import type { GatewayReply, GatewayRequest } from "@antler/plugin-gateway/routes";
import type { AntlerClient, SerializedMessage, ThreadRecord, ValuesEvent } from "@antler/plugin-runtime";
import type { z } from "zod";
import { type LangGraphValues, toLangGraphValues } from "./messages.js";

/** The code of a 422: a body or query the LangGraph routes cannot take (the field is in `where`). */
export const LANGGRAPH_INVALID_REQUEST = "ANTLER_ERR_LANGGRAPH_INVALID_REQUEST";
/** The code of a 405/422 for a part of the LangGraph API Antler has no concept for (the detail says which). */
export const LANGGRAPH_UNSUPPORTED = "ANTLER_ERR_LANGGRAPH_UNSUPPORTED";
/** No assistant by that id for this user. */
export const ASSISTANT_NOT_FOUND = "ANTLER_ERR_ASSISTANT_NOT_FOUND";

const ASK_CLARIFICATION = "ask_clarification";

/**
 * LangGraph's error body is `{ "detail": "..." }` (the SDK surfaces the body text); Antler's `code`, and `where`
 * and `hint` when known, sit beside it. The gateway adds `X-Trace-Id` to every answer.
 */
export interface LangGraphErrorBody {
  detail: string;
  code: string;
  where?: string;
  hint?: string;
}

export function langGraphError(status: number, code: string, detail: string, extra: { where?: string; hint?: string } = {}): GatewayReply {
  const body: LangGraphErrorBody = { detail, code, ...extra };
  return { status, body };
}

/** A 422 naming the first field the schema refused. */
export function invalidRequest(error: z.ZodError, prefix = ""): GatewayReply {
  const issue = error.issues[0];
  const where = [prefix, ...(issue?.path ?? []).map(String)].filter(Boolean).join(".") || "(body)";
  return langGraphError(422, LANGGRAPH_INVALID_REQUEST, `${where}: ${issue?.message ?? "invalid"}`, { where });
}

/** Parses with `schema`, or answers the 422 for it. */
export function parseOr422<S extends z.ZodType>(
  schema: S,
  value: unknown,
  prefix = "",
): { ok: true; value: z.output<S> } | { ok: false; reply: GatewayReply } {
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, reply: invalidRequest(parsed.error, prefix) };
}

// Antler's coded errors as LangGraph statuses; anything else goes on to the gateway's own answer.
const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  ANTLER_ERR_THREAD_NOT_FOUND: 404,
  ANTLER_ERR_RUN_NOT_FOUND: 404,
  ANTLER_ERR_AGENT_NOT_FOUND: 404,
  ANTLER_ERR_CHECKPOINT_NOT_FOUND: 404,
  [ASSISTANT_NOT_FOUND]: 404,
  ANTLER_ERR_STATE_CONFLICT: 409,
  ANTLER_ERR_THREAD_BUSY: 409,
  ANTLER_ERR_RUN_CANCELLED: 409,
  ANTLER_ERR_AGENT_INVALID: 422,
  ANTLER_ERR_CONFIG_INVALID: 422,
  ANTLER_ERR_MODEL_NOT_FOUND: 422,
  ANTLER_ERR_PATH_UNSAFE: 422,
};

/** Runs a LangGraph handler, answering Antler's coded errors in LangGraph's shape. */
export async function withLangGraphErrors(handle: () => Promise<GatewayReply>): Promise<GatewayReply> {
  try {
    return await handle();
  } catch (error) {
    if (!isAntlerError(error)) throw error;
    const status = STATUS_BY_CODE[error.code];
    if (status === undefined) throw error;
    const first = error.message.split("\n")[0] ?? error.message;
    return langGraphError(status, error.code, first, {
      ...(error.where ? { where: error.where } : {}),
      ...(error.hint ? { hint: error.hint } : {}),
    });
  }
}

/** A 404 for a thread the user does not have (missing, or another user's: the same answer). */
export function threadNotFound(threadId: string): GatewayReply {
  return langGraphError(404, "ANTLER_ERR_THREAD_NOT_FOUND", `Thread with ID ${threadId} not found`);
}

// ------------------------------------------------------------------ status and interrupts

export type LangGraphThreadStatus = "idle" | "busy" | "interrupted" | "error";

/** A LangGraph interrupt: an `ask_clarification` the thread's last run ended on, waiting for the user's answer. */
export interface LangGraphInterrupt {
  /** The tool call id of the question: `command.resume` answers it. */
  id: string;
  /** The question as the UI renders it: `question`, `clarification_type`, `options` or `fields`, `context`. */
  value: Record<string, unknown>;
}

/**
 * The thread's pending interrupt: its last message is a successful `ask_clarification` answer (the Clarification
 * middleware ends the turn right after it, so the question is the last thing in the thread until the user
 * replies). Reads one message, whatever the thread's length. `null`: nothing is pending.
 */
export async function pendingInterrupt(client: AntlerClient, userId: string, threadId: string): Promise<LangGraphInterrupt | null> {
  const thread = await client.getThread(threadId, { userId, messages: { limit: 1 } });
  return interruptOf(thread.messages.at(-1));
}

/** The interrupt a thread whose last message is `last` waits on, or null. */
export function interruptOf(last: SerializedMessage | undefined): LangGraphInterrupt | null {
  if (last?.type !== "tool" || last.name !== ASK_CLARIFICATION || last.status === "error") return null;
  const artifact = last.artifact as { human_input?: Record<string, unknown> } | undefined;
  const value = artifact?.human_input ?? { question: last.content };
  return { id: last.tool_call_id ?? last.id ?? "", value };
}

/**
 * The thread's LangGraph status from its runs: `busy` while a run is running or queued, `error` when the last
 * run failed, `interrupted` when it ended on a question (`last` is the thread's last message, when the caller has
 * it; otherwise one message is read), else `idle`. A cancelled run leaves the thread idle.
 */
export async function threadStatus(
  client: AntlerClient,
  userId: string,
  threadId: string,
  last?: SerializedMessage | null,
): Promise<LangGraphThreadStatus> {
  const [latest] = await client.listRuns(threadId, { userId, limit: 1 });
  if (latest?.status === "running" || latest?.status === "pending") return "busy";
  if (latest?.status === "error") return "error";
  const message = last === undefined ? (await client.getThread(threadId, { userId, messages: { limit: 1 } })).messages.at(-1) : last;
  return interruptOf(message ?? undefined) ? "interrupted" : "idle";
}

// ------------------------------------------------------------------ thread JSON

/** A thread as LangGraph's SDK reads it (`Thread` in `@langchain/langgraph-sdk`). */
export interface LangGraphThread {
  thread_id: string;
  created_at: string;
  updated_at: string;
  state_updated_at: string;
  metadata: Record<string, unknown>;
  status: LangGraphThreadStatus;
  values: LangGraphValues | Record<string, never>;
  interrupts: Record<string, LangGraphInterrupt[]>;
}

/** The LangGraph thread for an Antler record, its values (or `{}` for a thread never run) and status. */
export function toLangGraphThread(
  record: ThreadRecord,
  values: ValuesEvent["data"] | null,
  status: LangGraphThreadStatus,
  interrupt: LangGraphInterrupt | null,
): LangGraphThread {
  return {
    thread_id: record.thread_id,
    created_at: record.created_at,
    updated_at: record.updated_at,
    // Antler bumps `updated_at` whenever a run or an update writes the thread's state.
    state_updated_at: record.updated_at,
    metadata: record.metadata,
    status,
    values: values ? toLangGraphValues(values) : {},
    interrupts: interrupt ? { [interrupt.id]: [interrupt] } : {},
  };
}

/**
 * The whole LangGraph thread: record, state and status. `messages: { limit }` reads only the last `limit`
 * messages (a preview for lists); without it the thread's messages are all read.
 */
export async function loadLangGraphThread(
  client: AntlerClient,
  userId: string,
  threadId: string,
  options: { messages?: { limit: number } } = {},
): Promise<LangGraphThread> {
  const thread = await client.getThread(threadId, { userId, ...(options.messages ? { messages: options.messages } : {}) });
  const last = thread.messages.at(-1) ?? null;
  const status = await threadStatus(client, userId, threadId, last);
  const hasState = thread.messages_total > 0 || thread.todos !== null || thread.artifacts.length > 0;
  const values: ValuesEvent["data"] | null = hasState
    ? {
        title: thread.title,
        messages: thread.messages,
        artifacts: thread.artifacts,
        summary_text: thread.summary_text,
        todos: thread.todos,
        stop_reason: null,
      }
    : null;
  return toLangGraphThread(thread, values, status, status === "interrupted" ? interruptOf(last ?? undefined) : null);
}

/** The query string's values for `name`, repeated or not (`?select=a&select=b`). */
export function queryValues(req: GatewayRequest, name: string): string[] {
  return new URL(req.request.url).searchParams.getAll(name);
}
