// LangGraph threads over Antler's threads: records, metadata, state at checkpoints, history, copies. Every read
// and write is the caller's own (`req.userId`); another user's thread answers exactly like a missing one.

import type { AntlerClient, SerializedMessage, ThreadCheckpoint, ThreadDetails, ThreadRecord, ValuesEvent } from "@antler/plugin-runtime";
import type { GatewayReply, GatewayRoute } from "@antler/plugin-runtime/routes";
import { z } from "zod";
import { invalidRequest, parseRequest, unsupported } from "./errors.js";
import { type LangGraphRequest, type LangGraphRouteOptions, langGraphRoute, queryValues, searchPageFields } from "./http.js";
import { INTERRUPT_TAIL, type LangGraphInterrupt, pendingInterrupt } from "./interrupts.js";
import { type LangGraphValues, toLangGraphValues } from "./messages.js";

// ------------------------------------------------------------------ status and thread JSON

export type LangGraphThreadStatus = "idle" | "busy" | "interrupted" | "error";

/** A thread's LangGraph status, and the interrupt it waits on when it is `interrupted`. */
export interface ThreadStatus {
  status: LangGraphThreadStatus;
  interrupt: LangGraphInterrupt | null;
}

/**
 * The thread's LangGraph status from its runs: `busy` while a run is running or queued, `error` when the last
 * run failed, `interrupted` when it ended on a question (`pendingInterrupt`), else `idle`. A cancelled run leaves
 * the thread idle. `tail`: the thread's last messages when the caller has them (all of them, or at least
 * `INTERRUPT_TAIL`); otherwise that many are read.
 */
export async function threadStatus(
  client: AntlerClient,
  userId: string,
  threadId: string,
  tail?: readonly SerializedMessage[],
): Promise<ThreadStatus> {
  const [latest] = await client.listRuns(threadId, { userId, limit: 1 });
  if (latest?.status === "running" || latest?.status === "pending") return { status: "busy", interrupt: null };
  if (latest?.status === "error") return { status: "error", interrupt: null };
  // A run paused for approval: its interrupt (the pending calls) is the thread's.
  if (latest?.status === "paused" && latest.interrupt)
    return { status: "interrupted", interrupt: { id: latest.interrupt.id, value: latest.interrupt.value } };
  const messages = tail ?? (await client.getThread(threadId, { userId, messages: { limit: INTERRUPT_TAIL } })).messages;
  const interrupt = pendingInterrupt(messages);
  return { status: interrupt ? "interrupted" : "idle", interrupt };
}

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
export function toLangGraphThread(record: ThreadRecord, values: ValuesEvent["data"] | null, status: ThreadStatus): LangGraphThread {
  return {
    thread_id: record.thread_id,
    created_at: record.created_at,
    updated_at: record.updated_at,
    // Antler bumps `updated_at` whenever a run or an update writes the thread's state.
    state_updated_at: record.updated_at,
    metadata: record.metadata,
    status: status.status,
    values: values ? toLangGraphValues(values) : {},
    interrupts: status.interrupt ? { [status.interrupt.id]: [status.interrupt] } : {},
  };
}

/**
 * The whole LangGraph thread: record, state and status. `messages: { limit }` puts only the last `limit`
 * messages in `values` (a preview for lists; at most `INTERRUPT_TAIL` are read); without it they are all read.
 */
export async function loadLangGraphThread(
  client: AntlerClient,
  userId: string,
  threadId: string,
  options: { messages?: { limit: number } } = {},
): Promise<LangGraphThread> {
  const preview = options.messages?.limit;
  const thread = await client.getThread(threadId, {
    userId,
    ...(preview !== undefined ? { messages: { limit: Math.max(preview, INTERRUPT_TAIL) } } : {}),
  });
  const status = await threadStatus(client, userId, threadId, thread.messages);
  const hasState = thread.messages_total > 0 || thread.todos !== null || thread.artifacts.length > 0;
  const values = hasState ? threadValues(thread, preview !== undefined ? thread.messages.slice(-preview) : thread.messages) : null;
  return toLangGraphThread(thread, values, status);
}

/** A thread read with `client.getThread` as the run state (`values`) it holds; `messages`: the ones to put in. */
export function threadValues(thread: ThreadDetails, messages: SerializedMessage[] = thread.messages): ValuesEvent["data"] {
  return {
    title: thread.title ?? null,
    messages,
    artifacts: thread.artifacts,
    summary_text: thread.summary_text,
    todos: thread.todos,
    stop_reason: null,
  };
}

// ------------------------------------------------------------------ routes

const metadataSchema = z.record(z.string(), z.unknown());
const statusSchema = z.enum(["idle", "busy", "interrupted", "error"]);
/** Messages a search result carries in `values.messages`: the last one, a preview; `GET /threads/{id}` has all. */
export const SEARCH_MESSAGES_PREVIEW = 1;
/** Thread records read per page while filtering a search. */
const RECORD_PAGE = 1000;

const createSchema = z.object({
  thread_id: z.string().min(1).optional(),
  metadata: metadataSchema.optional(),
  if_exists: z.enum(["raise", "do_nothing"]).optional(),
  supersteps: z
    .array(z.unknown())
    .max(0, "is not supported: start a run (or POST /threads/{id}/state) to give the thread state")
    .optional(),
  ttl: z.never({ error: "is not supported: Antler threads live until deleted" }).optional(),
});

const searchSchema = z.object({
  metadata: metadataSchema.optional(),
  ids: z.array(z.string()).max(1000).optional(),
  values: z
    .record(z.string(), z.unknown())
    .refine((v) => Object.keys(v).length === 0, "filtering by state values is not supported; filter by metadata, ids or status")
    .optional(),
  status: statusSchema.optional(),
  ...searchPageFields,
  sort_by: z.enum(["thread_id", "status", "created_at", "updated_at", "state_updated_at"]).optional(),
  select: z
    .array(
      z.enum([
        "thread_id",
        "created_at",
        "updated_at",
        "state_updated_at",
        "metadata",
        "config",
        "context",
        "status",
        "values",
        "interrupts",
      ]),
    )
    .optional(),
  extract: z.never({ error: "is not supported" }).optional(),
});

const countSchema = z.object({
  metadata: metadataSchema.optional(),
  values: searchSchema.shape.values,
  status: statusSchema.optional(),
});

const updateSchema = z.object({
  metadata: metadataSchema.optional(),
  ttl: z.never({ error: "is not supported: Antler threads live until deleted" }).optional(),
});

const checkpointSchema = z.object({
  thread_id: z.string().optional(),
  checkpoint_ns: z.string().optional(),
  checkpoint_id: z.string().optional(),
});

const updateStateSchema = z.object({
  values: z
    .union([z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown())).length(1)])
    .nullable()
    .optional(),
  as_node: z.string().optional(),
  checkpoint_id: z.string().optional(),
  checkpoint: checkpointSchema.optional(),
});

const historySchema = z.object({
  limit: z.number().int().min(1).max(1000).default(10),
  before: z.union([z.string(), z.object({ configurable: checkpointSchema.optional() })]).optional(),
  metadata: metadataSchema.optional(),
  checkpoint: checkpointSchema.optional(),
  select: z.array(z.string()).optional(),
});

const stateKeys = new Set(["title", "messages", "artifacts", "todos", "summary_text", "stop_reason"]);

/** A checkpoint as LangGraph's `ThreadState`; `interrupt`: what the thread waits on (its latest checkpoint only). */
function toThreadState(threadId: string, checkpoint: ThreadCheckpoint, interrupt: LangGraphInterrupt | null = null) {
  const ref = (id: string | null) =>
    id === null ? null : { thread_id: threadId, checkpoint_ns: "", checkpoint_id: id, checkpoint_map: null };
  return {
    values: checkpoint.checkpoint_id === "" ? {} : toLangGraphValues(checkpoint.values),
    next: checkpoint.next,
    // A pending question is also the last task's interrupt, where LangGraph's server puts a paused node's
    // interrupts (and where useStream looks after a reload); the ask_clarification call is that task.
    tasks: [
      ...checkpoint.tasks.map((task) => ({ ...task, interrupts: [], checkpoint: null, state: null })),
      ...(interrupt
        ? [
            {
              id: interrupt.id,
              name: "ask_clarification",
              path: [],
              error: null,
              interrupts: [interrupt],
              checkpoint: null,
              state: null,
              result: null,
            },
          ]
        : []),
    ],
    checkpoint: ref(checkpoint.checkpoint_id || null) ?? {
      thread_id: threadId,
      checkpoint_ns: "",
      checkpoint_id: null,
      checkpoint_map: null,
    },
    metadata: checkpoint.metadata,
    created_at: checkpoint.created_at,
    parent_checkpoint: ref(checkpoint.parent_checkpoint_id),
    interrupts: interrupt ? [interrupt] : [],
  };
}

/** Keeps the fields `select` names (`values.<key>` keeps one state key); all of them without it. */
function selectFields(state: Record<string, unknown>, select: readonly string[]): Record<string, unknown> {
  if (select.length === 0) return state;
  const out: Record<string, unknown> = {};
  for (const field of select) {
    if (field.startsWith("values.")) {
      const key = field.slice("values.".length);
      const values = (out.values ?? {}) as Record<string, unknown>;
      values[key] = (state.values as Record<string, unknown>)[key];
      out.values = values;
    } else if (field in state) {
      out[field] = state[field];
    }
  }
  return out;
}

/** Every thread record of the user (records only, no state), newest first. */
async function* allRecords(client: AntlerClient, userId: string): AsyncGenerator<ThreadRecord> {
  for (let offset = 0; ; offset += RECORD_PAGE) {
    const page = await client.listThreads({ userId, limit: RECORD_PAGE, offset });
    yield* page;
    if (page.length < RECORD_PAGE) return;
  }
}

const metadataMatches = (metadata: Record<string, unknown>, filter: Record<string, unknown> | undefined) =>
  Object.entries(filter ?? {}).every(([key, value]) => JSON.stringify(metadata[key]) === JSON.stringify(value));

/**
 * The user's threads matching the filters, with their status when the filter or sort needs it. Cost: the user's
 * thread records (no state), plus the runs of each record when `status` filters or sorts.
 */
async function matchingThreads(
  client: AntlerClient,
  userId: string,
  filter: { metadata?: Record<string, unknown>; ids?: string[]; status?: LangGraphThreadStatus },
  needStatus: boolean,
): Promise<Array<{ record: ThreadRecord; status?: LangGraphThreadStatus }>> {
  const ids = filter.ids ? new Set(filter.ids) : undefined;
  const out: Array<{ record: ThreadRecord; status?: LangGraphThreadStatus }> = [];
  for await (const record of allRecords(client, userId)) {
    if (ids && !ids.has(record.thread_id)) continue;
    if (!metadataMatches(record.metadata, filter.metadata)) continue;
    if (!needStatus && filter.status === undefined) {
      out.push({ record });
      continue;
    }
    const { status } = await threadStatus(client, userId, record.thread_id);
    if (filter.status === undefined || status === filter.status) out.push({ record, status });
  }
  return out;
}

async function searchThreads(req: LangGraphRequest): Promise<GatewayReply> {
  const query = parseRequest(searchSchema, req.body ?? {});
  const found = await matchingThreads(req.client, req.userId, query, query.sort_by === "status");
  if (query.sort_by) {
    const key = query.sort_by === "state_updated_at" ? "updated_at" : query.sort_by;
    const sign = query.sort_order === "asc" ? 1 : -1;
    const value = (t: (typeof found)[number]) => (key === "status" ? (t.status ?? "") : t.record[key]);
    found.sort((a, b) => sign * value(a).localeCompare(value(b)));
  } else if (query.sort_order === "asc") {
    found.reverse();
  }
  const page = found.slice(query.offset, query.offset + query.limit);
  const threads: LangGraphThread[] = [];
  for (const { record } of page) {
    threads.push(await loadLangGraphThread(req.client, req.userId, record.thread_id, { messages: { limit: SEARCH_MESSAGES_PREVIEW } }));
  }
  const select = query.select ?? [];
  return { body: threads.map((t) => selectFields(t as unknown as Record<string, unknown>, select)) };
}

async function createThread(req: LangGraphRequest): Promise<GatewayReply> {
  const { thread_id, metadata, if_exists } = parseRequest(createSchema, req.body ?? {});
  const record = await req.client.createThread({
    userId: req.userId,
    ...(thread_id !== undefined ? { threadId: thread_id } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    ifExists: if_exists ?? "raise",
  });
  // Made just now (`raise` refuses an existing id): no state, no run, nothing to read back. `do_nothing` may
  // have found an existing thread, which is read whole.
  if ((if_exists ?? "raise") === "raise") return { body: toLangGraphThread(record, null, { status: "idle", interrupt: null }) };
  return { body: await loadLangGraphThread(req.client, req.userId, record.thread_id) };
}

async function updateState(req: LangGraphRequest): Promise<GatewayReply> {
  const body = parseRequest(updateStateSchema, req.body ?? {});
  const threadId = req.params.id ?? "";
  const values = Array.isArray(body.values) ? body.values[0] : body.values;
  if (!values || Object.keys(values).length === 0) {
    throw invalidRequest(
      "values: an update without values is not supported",
      "values",
      `Send the state keys to write: ${[...stateKeys].join(", ")}.`,
    );
  }
  const unknown = Object.keys(values).find((key) => !stateKeys.has(key));
  if (unknown !== undefined) {
    throw invalidRequest(
      `values.${unknown}: the thread's state has no such key`,
      `values.${unknown}`,
      `The state keys are ${[...stateKeys].join(", ")}.`,
    );
  }
  const checkpointId = body.checkpoint_id ?? body.checkpoint?.checkpoint_id;
  const result = await req.client.updateThreadState(threadId, {
    userId: req.userId,
    values,
    ...(body.as_node !== undefined ? { asNode: body.as_node } : {}),
    ...(checkpointId !== undefined ? { checkpointId } : {}),
  });
  const checkpoint = { thread_id: threadId, checkpoint_ns: "", checkpoint_id: result.checkpoint_id };
  // LangGraph's servers answer `checkpoint`; the SDK's type reads `configurable`: both name the new checkpoint.
  return { body: { checkpoint, configurable: checkpoint } };
}

async function readState(req: LangGraphRequest, checkpointId: string | undefined, select: readonly string[]): Promise<GatewayReply> {
  const threadId = req.params.id ?? "";
  const checkpoint = await req.client.getThreadState(threadId, { userId: req.userId, ...(checkpointId ? { checkpointId } : {}) });
  // Only the latest checkpoint can be waiting on the user.
  const interrupt = checkpointId ? null : (await threadStatus(req.client, req.userId, threadId, checkpoint.values.messages)).interrupt;
  return { body: selectFields(toThreadState(threadId, checkpoint, interrupt), select) };
}

async function history(req: LangGraphRequest, raw: unknown): Promise<GatewayReply> {
  const query = parseRequest(historySchema, raw ?? {});
  const threadId = req.params.id ?? "";
  const before = typeof query.before === "string" ? query.before : query.before?.configurable?.checkpoint_id;
  if (query.checkpoint?.checkpoint_ns) {
    throw invalidRequest("checkpoint.checkpoint_ns: Antler's threads have only the root namespace", "checkpoint.checkpoint_ns");
  }
  const checkpoints = await req.client.getThreadHistory(threadId, {
    userId: req.userId,
    limit: query.limit,
    ...(before ? { before } : {}),
    ...(query.metadata ? { metadata: query.metadata } : {}),
  });
  const select = query.select ?? [];
  // Unfiltered and from the top, the first entry is the latest checkpoint: the one that can wait on the user
  // (useStream reads a reloaded thread's interrupt from it).
  const latest = !before && !query.metadata ? checkpoints[0] : undefined;
  const interrupt = latest ? (await threadStatus(req.client, req.userId, threadId, latest.values.messages)).interrupt : null;
  return { body: checkpoints.map((c) => selectFields(toThreadState(threadId, c, c === latest ? interrupt : null), select)) };
}

const historyQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  before: z.string().optional(),
});

/** `/threads/*` under `options.prefix` (the runs routes add `/threads/{id}/runs/*`). */
export function threadRoutes(options: LangGraphRouteOptions): GatewayRoute[] {
  const p = `${options.prefix}/threads`;
  const route = langGraphRoute;
  return [
    route("POST", p, "create a thread (thread_id, metadata, if_exists)", createThread),
    route("POST", `${p}/search`, "the user's threads by metadata, ids and status (values hold the last message)", searchThreads),
    route("POST", `${p}/count`, "how many threads match", async (req) => {
      const filter = parseRequest(countSchema, req.body ?? {});
      return { body: (await matchingThreads(req.client, req.userId, filter, false)).length };
    }),
    route("GET", `${p}/:id`, "one thread with its state, status and interrupts", async (req) => ({
      body: await loadLangGraphThread(req.client, req.userId, req.params.id ?? ""),
    })),
    route("PATCH", `${p}/:id`, "merge metadata into a thread's", async (req) => {
      const { metadata } = parseRequest(updateSchema, req.body ?? {});
      const threadId = req.params.id ?? "";
      if (metadata) await req.client.updateThread(threadId, { userId: req.userId, metadata });
      if (req.request.headers.get("prefer") === "return=minimal") {
        await req.client.getThreadRecord(threadId, { userId: req.userId });
        return { status: 204 };
      }
      return { body: await loadLangGraphThread(req.client, req.userId, threadId) };
    }),
    route("DELETE", `${p}/:id`, "delete a thread (its runs are cancelled)", async (req) => {
      await req.client.deleteThread(req.params.id ?? "", { userId: req.userId });
      return { status: 204 };
    }),
    route("POST", `${p}/:id/copy`, "copy a thread (latest state, metadata, files) to a new one", async (req) => {
      const copy = await req.client.copyThread(req.params.id ?? "", { userId: req.userId });
      return { body: await loadLangGraphThread(req.client, req.userId, copy.thread_id) };
    }),
    route("GET", `${p}/:id/state`, "the thread's current state", (req) => readState(req, undefined, queryValues(req, "select"))),
    route("POST", `${p}/:id/state`, "write state (values through the reducers, as_node)", updateState),
    route("PATCH", `${p}/:id/state`, "patch a checkpoint's metadata (refused)", async () => {
      throw unsupported(
        "Checkpoint metadata is written by the runtime and cannot be patched",
        "Keep your own data in the thread's metadata (PATCH /threads/{id}).",
      );
    }),
    route("GET", `${p}/:id/state/:checkpoint`, "the thread's state at a checkpoint", (req) =>
      readState(req, req.params.checkpoint, queryValues(req, "select")),
    ),
    route("POST", `${p}/:id/state/checkpoint`, "the thread's state at a checkpoint (by config)", async (req) => {
      const body = parseRequest(z.object({ checkpoint: checkpointSchema, select: z.array(z.string()).optional() }), req.body ?? {});
      return readState(req, body.checkpoint.checkpoint_id, body.select ?? []);
    }),
    route("POST", `${p}/:id/history`, "the thread's checkpoints, newest first", (req) => history(req, req.body)),
    route("GET", `${p}/:id/history`, "the thread's checkpoints, newest first", async (req) => {
      return history(req, parseRequest(historyQuerySchema, req.query ?? {}, "query"));
    }),
  ];
}
