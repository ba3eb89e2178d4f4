import { z } from "zod";

/**
 * The one schema source for what crosses the gateway: request bodies the gateway validates, and response
 * bodies that `AntlerClient` returns in process and the gateway sends over HTTP. The conformance tests parse
 * both with these schemas, so a field added to one side and not the other fails CI.
 */

const jsonObject = z.record(z.string(), z.unknown());

// ---------------------------------------------------------------- stream events (SSE `data:` and client.stream)

export const serializedToolCallSchema = z.object({ id: z.string(), name: z.string(), args: jsonObject });

export const serializedMessageSchema = z.object({
  type: z.enum(["human", "ai", "tool", "system"]),
  id: z.string().optional(),
  content: z.string(),
  tool_calls: z.array(serializedToolCallSchema).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
  status: z.enum(["success", "error"]).optional(),
  artifact: z.unknown().optional(),
  additional_kwargs: jsonObject.optional(),
});

export const usageSchema = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
});

export const valuesEventSchema = z.object({
  type: z.literal("values"),
  data: z.object({
    title: z.string().nullable(),
    messages: z.array(serializedMessageSchema),
    artifacts: z.array(z.string()),
    summary_text: z.string().nullable(),
    todos: z.array(z.unknown()).nullable(),
    stop_reason: z.string().nullable(),
  }),
});

export const messagesTupleEventSchema = z.object({
  type: z.literal("messages-tuple"),
  data: z.union([
    z.object({ type: z.literal("ai"), id: z.string(), content: z.literal(""), tool_calls: z.array(serializedToolCallSchema) }),
    z.object({ type: z.literal("ai"), id: z.string(), content: z.literal(""), reasoning: z.string() }),
    z.object({
      type: z.literal("ai"),
      id: z.string(),
      content: z.literal(""),
      tool_call_chunks: z.array(
        z.object({ index: z.number().int(), id: z.string().optional(), name: z.string().optional(), args: z.string() }),
      ),
    }),
    z.object({ type: z.literal("ai"), id: z.string(), content: z.string() }),
    z.object({
      type: z.literal("tool"),
      id: z.string().optional(),
      tool_call_id: z.string(),
      name: z.string().optional(),
      content: z.string(),
      status: z.enum(["success", "error"]),
      artifact: z.unknown().optional(),
    }),
  ]),
});

export const customEventSchema = z.object({ type: z.literal("custom"), data: jsonObject });

/** USD a run's priced model calls cost, subagents included, by the model that answered. */
export const runCostSchema = z.object({ usd: z.number(), by_model: z.record(z.string(), z.number()) });

export const endEventSchema = z.object({
  type: z.literal("end"),
  data: z.object({
    thread_id: z.string(),
    run_id: z.string(),
    trace_id: z.string(),
    usage: usageSchema,
    stop_reason: z.string().nullable(),
    /** Absent only from end events logged before runs carried a cost. */
    cost: runCostSchema.optional(),
  }),
});

export const streamEventSchema = z.discriminatedUnion("type", [
  valuesEventSchema,
  messagesTupleEventSchema,
  customEventSchema,
  endEventSchema,
]);

/** The first SSE frame of a gateway stream (`event: metadata`): which run this is. */
export const runMetadataEventSchema = z.object({ run_id: z.string(), thread_id: z.string(), trace_id: z.string() });

/** The SSE frame sent when a run fails after the stream started (`event: error`). */
export const streamErrorEventSchema = z.object({
  code: z.string(),
  message: z.string(),
  run_id: z.string(),
  trace_id: z.string(),
});

// ---------------------------------------------------------------- threads

export const threadRecordSchema = z.object({
  thread_id: z.string(),
  user_id: z.string(),
  title: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  metadata: jsonObject,
});

export const threadListResponseSchema = z.object({ threads: z.array(threadRecordSchema) });

/** `GET /api/threads/{id}/state` and `client.getThread`. */
export const threadStateSchema = threadRecordSchema.extend({
  /** Oldest first: the whole thread, or the page asked for (`GET /state` answers the last 50 by default). */
  messages: z.array(serializedMessageSchema),
  /** How many messages the thread holds. */
  messages_total: z.number().int().min(0),
  /** Position of `messages[0]` in the thread: `?before=` this reads the page before. */
  messages_offset: z.number().int().min(0),
  artifacts: z.array(z.string()),
  summary_text: z.string().nullable(),
  todos: z.array(z.unknown()).nullable(),
});

export const threadDeleteResponseSchema = z.object({ thread_id: z.string(), deleted: z.literal(true) });

const threadIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/, "use 1–128 letters, digits, '.', '_', '@' and '-', starting with a letter or digit")
  .refine((id) => !id.includes(".."), "must not contain '..'");

export const threadCreateRequestSchema = z.strictObject({
  /** Omitted: a fresh UUID. */
  thread_id: threadIdSchema.optional(),
  metadata: jsonObject.optional(),
  /** `do_nothing` (default) returns an existing thread of that id; `raise` makes it a 409. */
  if_exists: z.enum(["do_nothing", "raise"]).default("do_nothing"),
});

// ---------------------------------------------------------------- runs

/**
 * `pending`: queued behind another run on its thread (multitask_strategy `enqueue` or `interrupt`). `paused`: waiting
 * for a person's decision (an approval); resume it with `POST .../runs/{run}/resume`.
 */
export const runStatusSchema = z.enum(["pending", "running", "paused", "success", "error", "cancelled"]);

/** What a paused run waits on: LangGraph's interrupt id and value (an approval: `{ kind, calls, expires_at, on_timeout }`). */
export const pausedInterruptSchema = z.object({ id: z.string(), value: jsonObject });

/** LangGraph's name and values: what a run does when its thread is busy. Default `reject`. */
export const multitaskStrategySchema = z.enum(["reject", "enqueue", "interrupt"]);

export const runRecordSchema = z.object({
  run_id: z.string(),
  thread_id: z.string(),
  user_id: z.string(),
  status: runStatusSchema,
  trace_id: z.string(),
  model: z.string(),
  /** What the run was asked to do (input, context, metadata), with secrets redacted. */
  kwargs: jsonObject,
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  /** A paused run's pending interrupt; null otherwise. */
  interrupt: pausedInterruptSchema.nullable(),
  /** A paused run's deadline (ISO-8601), after which its `on_timeout` decision applies; null otherwise. */
  resume_by: z.string().nullable(),
  /** USD its priced model calls cost (subagents included), written when it ends; null before that or when none is priced. */
  cost_usd: z.number().nullable(),
  /** The attempts of its model calls that needed more than one (retries, fallbacks), in order. */
  model_attempts: z.array(jsonObject),
  /** 1, plus one for each time a live instance took the run over after the instance running it stopped. */
  attempt: z.number().int().min(1),
});

export const runListResponseSchema = z.object({ runs: z.array(runRecordSchema) });

export const runCancelResponseSchema = z.object({ run_id: z.string(), thread_id: z.string(), status: runStatusSchema });

/** `POST /api/threads/{id}/runs/wait`, `POST .../runs/{run}/resume`, `client.invoke` and `client.resume`. */
export const runWaitResponseSchema = z.object({
  run_id: z.string(),
  thread_id: z.string(),
  trace_id: z.string(),
  /** `paused`: the run waits for a decision on `interrupt`. */
  status: z.enum(["success", "paused"]),
  interrupt: jsonObject.optional(),
  /** The last AI message's text. */
  output: z.string(),
  values: valuesEventSchema.shape.data,
  usage: usageSchema,
});

const inputMessageSchema = z.object({
  role: z.enum(["user", "human"]),
  content: z.union([z.string(), z.array(z.object({ type: z.literal("text"), text: z.string() }).loose())]),
});

/** Body of `runs/stream` and `runs/wait`: a LangGraph-style `input.messages` or a plain `message`. */
export const runCreateRequestSchema = z
  .object({
    input: z.object({ messages: z.array(inputMessageSchema).min(1) }).optional(),
    message: z.string().min(1).optional(),
    model: z.string().min(1).optional(),
    /** Caller runtime context; server-owned keys are dropped. */
    context: jsonObject.optional(),
    /** Free-form run metadata, stored on the run record; a trace id here is replaced. */
    metadata: jsonObject.optional(),
    /** LangGraph's `config`; only `context`/`configurable` and `metadata` are read (merged under the top-level ones). */
    config: z
      .object({ configurable: jsonObject.optional(), context: jsonObject.optional(), metadata: jsonObject.optional() })
      .loose()
      .optional(),
    /** A custom agent of the caller (`GET /api/agents`); with `is_bootstrap`, the name of the agent being created. */
    agent_name: z.string().min(1).max(64).optional(),
    /** A bootstrap run: the model designs a new custom agent with the user and saves it with `setup_agent`. */
    is_bootstrap: z.boolean().optional(),
    /** Extended thinking for this run (default: the custom agent's `thinking`, else on; off on a model without `supports_thinking`). */
    thinking_enabled: z.boolean().optional(),
    /** This run's reasoning effort, in place of the model entry's (with thinking on, on a model with `supports_thinking`). */
    reasoning_effort: z.enum(["minimal", "low", "medium", "high"]).optional(),
    /** `reject` (default): 409 THREAD_BUSY if the thread has a run; `enqueue`: wait its turn; `interrupt`: cancel it and run. */
    multitask_strategy: multitaskStrategySchema.optional(),
    /**
     * What a dropped client means for the run (LangGraph's option): `cancel` (default) cancels it, `continue`
     * lets it finish, so the client can join again with `GET .../runs/{run_id}/stream` and `Last-Event-ID`.
     */
    on_disconnect: z.enum(["cancel", "continue"]).optional(),
    /** Accepted for LangGraph compatibility; Antler always streams values, messages-tuple, custom and end. */
    stream_mode: z.union([z.string(), z.array(z.string())]).optional(),
  })
  .loose()
  .refine((body) => body.input !== undefined || body.message !== undefined, {
    message: "give the user's message as `message` or `input.messages`",
    path: ["input"],
  });

export type RunCreateRequest = z.output<typeof runCreateRequestSchema>;

/** The text of the last user message of a run request. */
export function runRequestText(body: RunCreateRequest): string {
  if (body.message !== undefined) return body.message;
  const last = body.input?.messages.at(-1);
  if (!last) return "";
  return typeof last.content === "string" ? last.content : last.content.map((part) => part.text).join("");
}

// ---------------------------------------------------------------- files and models

export const uploadRecordSchema = z.object({
  filename: z.string(),
  virtual_path: z.string(),
  size: z.number().int().nonnegative(),
  mime_type: z.string(),
  markdown: z
    .object({ virtual_path: z.string(), size: z.number().int().nonnegative(), truncated: z.boolean() })
    .optional()
    .describe("The Markdown copy of a PDF/DOCX/XLSX/PPTX upload, when uploads.auto_convert_documents is on."),
  conversion_note: z.string().optional().describe("Why a document upload has no Markdown copy; the upload itself succeeded."),
});

export const uploadResponseSchema = z.object({ files: z.array(uploadRecordSchema) });

export const modelInfoSchema = z.object({
  name: z.string(),
  provider: z.string(),
  model: z.string().optional(),
  displayName: z.string().optional(),
  description: z.string().optional(),
  supportsVision: z.boolean(),
  supportsThinking: z.boolean(),
});

export const modelsListResponseSchema = z.object({ models: z.array(modelInfoSchema) });

// ---------------------------------------------------------------- custom agents

export const agentSummarySchema = z.object({
  name: z.string(),
  description: z.string(),
  model: z.string().nullable(),
  tool_groups: z.array(z.string()).nullable(),
  skills: z.array(z.string()).nullable(),
  thinking: z.boolean().nullable(),
  scope: z.enum(["user", "shared"]),
});

/** `GET /api/agents` and `client.listAgents`. */
export const agentsListResponseSchema = z.object({ agents: z.array(agentSummarySchema) });
/** `GET`/`PUT /api/agents/{name}`, `client.getAgent` and `client.saveAgent`. */
export const agentDetailsSchema = agentSummarySchema.extend({ soul: z.string() });
/** `DELETE /api/agents/{name}` and `client.deleteAgent`. */
export const agentDeleteResponseSchema = z.object({ name: z.string(), deleted: z.literal(true) });

// ---------------------------------------------------------------- misc

export const errorResponseSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    hint: z.string().optional(),
    where: z.string().optional(),
    details: jsonObject.optional(),
  }),
});

export const healthResponseSchema = z.object({ status: z.literal("ok"), version: z.string() });
