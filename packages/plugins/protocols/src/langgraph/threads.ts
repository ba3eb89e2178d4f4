// LangGraph threads over Antler's threads: records, metadata, state at checkpoints, history, copies. Every read
// and write is the caller's own (`req.userId`); another user's thread answers exactly like a missing one.
import { defineGatewayRoute, type GatewayReply, type GatewayRequest, type GatewayRoute } from "@antler/plugin-gateway/routes";
import type { AntlerClient, ThreadCheckpoint, ThreadRecord } from "@antler/plugin-runtime";
import { z } from "zod";
import { toLangGraphValues } from "./messages.js";
import type { LangGraphRouteOptions } from "./routes.js";
import {
  interruptOf,
  LANGGRAPH_UNSUPPORTED,
  type LangGraphThread,
  type LangGraphThreadStatus,
  langGraphError,
  loadLangGraphThread,
  parseOr422,
  queryValues,
  threadStatus,
  withLangGraphErrors,
} from "./wire.js";

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
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z.enum(["thread_id", "status", "created_at", "updated_at", "state_updated_at"]).optional(),
  sort_order: z.enum(["asc", "desc"]).optional(),
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

/** A checkpoint as LangGraph's `ThreadState`. */
function toThreadState(threadId: string, checkpoint: ThreadCheckpoint, last: boolean, status?: LangGraphThreadStatus) {
  const interrupt = last && status === "interrupted" ? interruptOf(checkpoint.values.messages.at(-1)) : null;
  const ref = (id: string | null) =>
    id === null ? null : { thread_id: threadId, checkpoint_ns: "", checkpoint_id: id, checkpoint_map: null };
  return {
    values: checkpoint.checkpoint_id === "" ? {} : toLangGraphValues(checkpoint.values),
    next: checkpoint.next,
    tasks: checkpoint.tasks.map((task) => ({ ...task, interrupts: [], checkpoint: null, state: null })),
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
    const status = await threadStatus(client, userId, record.thread_id);
    if (filter.status === undefined || status === filter.status) out.push({ record, status });
  }
  return out;
}

async function searchThreads(req: GatewayRequest): Promise<GatewayReply> {
  const parsed = parseOr422(searchSchema, req.body ?? {});
  if (!parsed.ok) return parsed.reply;
  const query = parsed.value;
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

async function createThread(req: GatewayRequest): Promise<GatewayReply> {
  const parsed = parseOr422(createSchema, req.body ?? {});
  if (!parsed.ok) return parsed.reply;
  const { thread_id, metadata, if_exists } = parsed.value;
  const record = await req.client.createThread({
    userId: req.userId,
    ...(thread_id !== undefined ? { threadId: thread_id } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    ifExists: if_exists ?? "raise",
  });
  return { body: await loadLangGraphThread(req.client, req.userId, record.thread_id) };
}

async function updateState(req: GatewayRequest): Promise<GatewayReply> {
  const parsed = parseOr422(updateStateSchema, req.body ?? {});
  if (!parsed.ok) return parsed.reply;
  const body = parsed.value;
  const threadId = req.params.id ?? "";
  const values = Array.isArray(body.values) ? body.values[0] : body.values;
  if (!values || Object.keys(values).length === 0) {
    return langGraphError(422, LANGGRAPH_UNSUPPORTED, "values: an update without values is not supported", {
      where: "values",
      hint: `Send the state keys to write: ${[...stateKeys].join(", ")}.`,
    });
  }
  const unknown = Object.keys(values).find((key) => !stateKeys.has(key));
  if (unknown !== undefined) {
    return langGraphError(422, "ANTLER_ERR_LANGGRAPH_INVALID_REQUEST", `values.${unknown}: the thread's state has no such key`, {
      where: `values.${unknown}`,
      hint: `The state keys are ${[...stateKeys].join(", ")}.`,
    });
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

async function readState(req: GatewayRequest, checkpointId: string | undefined, select: readonly string[]): Promise<GatewayReply> {
  const threadId = req.params.id ?? "";
  const checkpoint = await req.client.getThreadState(threadId, { userId: req.userId, ...(checkpointId ? { checkpointId } : {}) });
  // Only the latest checkpoint can be waiting on the user.
  const status = checkpointId ? undefined : await threadStatus(req.client, req.userId, threadId, checkpoint.values.messages.at(-1) ?? null);
  return { body: selectFields(toThreadState(threadId, checkpoint, !checkpointId, status), select) };
}

async function history(req: GatewayRequest, raw: unknown): Promise<GatewayReply> {
  const parsed = parseOr422(historySchema, raw ?? {});
  if (!parsed.ok) return parsed.reply;
  const query = parsed.value;
  const threadId = req.params.id ?? "";
  const before = typeof query.before === "string" ? query.before : query.before?.configurable?.checkpoint_id;
  if (query.checkpoint?.checkpoint_ns) {
    return langGraphError(422, LANGGRAPH_UNSUPPORTED, "checkpoint.checkpoint_ns: Antler's threads have only the root namespace", {
      where: "checkpoint.checkpoint_ns",
    });
  }
  const checkpoints = await req.client.getThreadHistory(threadId, {
    userId: req.userId,
    limit: query.limit,
    ...(before ? { before } : {}),
    ...(query.metadata ? { metadata: query.metadata } : {}),
  });
  const select = query.select ?? [];
  return { body: checkpoints.map((c) => selectFields(toThreadState(threadId, c, false), select)) };
}

const historyQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  before: z.string().optional(),
});

/** `/threads/*` under `options.prefix` (the runs routes add `/threads/{id}/runs/*`). */
export function threadRoutes(options: LangGraphRouteOptions): GatewayRoute[] {
  const p = `${options.prefix}/threads`;
  const route = (
    method: "GET" | "POST" | "PATCH" | "DELETE",
    path: string,
    summary: string,
    handle: (req: GatewayRequest) => Promise<GatewayReply>,
  ) =>
    defineGatewayRoute({
      method,
      path,
      mount: "root",
      summary: `LangGraph: ${summary}`,
      // Any JSON: the handler validates it, so a mismatch is LangGraph's 422 rather than the gateway's 400.
      ...(method === "POST" || method === "PATCH" ? { body: z.unknown() } : {}),
      handler: (req) => withLangGraphErrors(() => handle(req as GatewayRequest)),
    });
  return [
    route("POST", p, "create a thread (thread_id, metadata, if_exists)", createThread),
    route("POST", `${p}/search`, "the user's threads by metadata, ids and status (values hold the last message)", searchThreads),
    route("POST", `${p}/count`, "how many threads match", async (req) => {
      const parsed = parseOr422(countSchema, req.body ?? {});
      if (!parsed.ok) return parsed.reply;
      return { body: (await matchingThreads(req.client, req.userId, parsed.value, false)).length };
    }),
    route("GET", `${p}/:id`, "one thread with its state, status and interrupts", async (req) => ({
      body: await loadLangGraphThread(req.client, req.userId, req.params.id ?? ""),
    })),
    route("PATCH", `${p}/:id`, "merge metadata into a thread's", async (req) => {
      const parsed = parseOr422(updateSchema, req.body ?? {});
      if (!parsed.ok) return parsed.reply;
      const threadId = req.params.id ?? "";
      if (parsed.value.metadata) await req.client.updateThread(threadId, { userId: req.userId, metadata: parsed.value.metadata });
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
    route("PATCH", `${p}/:id/state`, "patch a checkpoint's metadata (refused)", async () =>
      langGraphError(405, LANGGRAPH_UNSUPPORTED, "Checkpoint metadata is written by the runtime and cannot be patched", {
        hint: "Keep your own data in the thread's metadata (PATCH /threads/{id}).",
      }),
    ),
    route("GET", `${p}/:id/state/:checkpoint`, "the thread's state at a checkpoint", (req) =>
      readState(req, req.params.checkpoint, queryValues(req, "select")),
    ),
    route("POST", `${p}/:id/state/checkpoint`, "the thread's state at a checkpoint (by config)", async (req) => {
      const parsed = parseOr422(z.object({ checkpoint: checkpointSchema, select: z.array(z.string()).optional() }), req.body ?? {});
      if (!parsed.ok) return parsed.reply;
      return readState(req, parsed.value.checkpoint.checkpoint_id, parsed.value.select ?? []);
    }),
    route("POST", `${p}/:id/history`, "the thread's checkpoints, newest first", (req) => history(req, req.body)),
    route("GET", `${p}/:id/history`, "the thread's checkpoints, newest first", async (req) => {
      const parsed = parseOr422(historyQuerySchema, req.query ?? {}, "query");
      if (!parsed.ok) return parsed.reply;
      return history(req, parsed.value);
    }),
  ];
}
