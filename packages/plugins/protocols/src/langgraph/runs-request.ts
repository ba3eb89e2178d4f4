// A LangGraph run request (the body of runs.stream / create / wait) → Antler's run options, validated.
import { findCallerDataViolation } from "@antler/plugin-gateway/caller-data";
import type { RunCallOptions } from "@antler/plugin-runtime";
import { z } from "zod";
import { invalidRequest, LangGraphError, parseRequest } from "./errors.js";
import { isRecord, type LangGraphRequest } from "./http.js";
import { resumeText } from "./interrupts.js";
import { RUN_METADATA_KEY } from "./run-json.js";

/** Stream modes the runs routes serve; anything else is a 422 naming these. */
export const SUPPORTED_STREAM_MODES = ["values", "updates", "messages", "messages-tuple", "custom", "events"] as const;
export type StreamMode = (typeof SUPPORTED_STREAM_MODES)[number];

const callerObject = z.record(z.string(), z.unknown());

// The body the SDK's runs.stream / create / wait send; unknown fields are let through (the SDK's versions differ).
const runBodySchema = z.looseObject({
  assistant_id: z.string().min(1).max(200),
  input: z.union([z.looseObject({ messages: z.array(z.unknown()).max(10_000).optional() }), z.null()]).optional(),
  command: z.union([z.looseObject({ resume: z.unknown().optional() }), z.null()]).optional(),
  stream_mode: z.union([z.string(), z.array(z.string()).max(20), z.null()]).optional(),
  stream_subgraphs: z.boolean().nullish(),
  multitask_strategy: z.string().nullish(),
  on_disconnect: z.string().nullish(),
  on_completion: z.string().nullish(),
  if_not_exists: z.string().nullish(),
  metadata: callerObject.nullish(),
  context: callerObject.nullish(),
  config: z.looseObject({ configurable: callerObject.nullish(), metadata: callerObject.nullish() }).nullish(),
  after_seconds: z.number().nullish(),
  interrupt_before: z.unknown().optional(),
  interrupt_after: z.unknown().optional(),
  checkpoint: z.unknown().optional(),
  checkpoint_id: z.unknown().optional(),
  webhook: z.unknown().optional(),
});

export interface PreparedLangGraphRun {
  /** The user message that starts the run (the input's last human message, or the resume answer). */
  message: string;
  /** `command.resume` was given: the thread must wait on an interrupt. */
  resume: boolean;
  /** `command.resume` as sent: a paused run (an approval) resumes with it as it is. */
  resumeValue: unknown;
  assistantId: string;
  streamModes: StreamMode[];
  subgraphs: boolean;
  onDisconnect: "cancel" | "continue";
  onCompletion: "delete" | "keep";
  ifNotExists: "create" | "reject";
  multitaskStrategy: "reject" | "enqueue" | "interrupt";
  options: Omit<RunCallOptions, "threadId" | "runId" | "signal" | "onAdmitted">;
}

function oneOf<T extends string>(
  value: string | null | undefined,
  allowed: readonly T[],
  fallback: T,
  where: string,
  why?: Partial<Record<string, string>>,
): T {
  if (value === null || value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  const reason = why?.[value];
  throw invalidRequest(
    reason ?? `${where} ${JSON.stringify(value.slice(0, 40))} is not supported; use one of: ${allowed.join(", ")}`,
    where,
    reason ? `Use one of: ${allowed.join(", ")}.` : undefined,
  );
}

const ROLLBACK_REFUSAL =
  'multitask_strategy "rollback" is not supported: Antler does not delete a cancelled run or undo what it wrote to the thread';

/** The LangGraph run request → Antler run options, validated; assistant and thread checks are the route's. */
export function prepareLangGraphRun(req: LangGraphRequest): PreparedLangGraphRun {
  const body = parseRequest(runBodySchema, req.body, "", "See the LangGraph runs section of the protocols README.");
  for (const field of ["interrupt_before", "interrupt_after", "checkpoint", "checkpoint_id", "webhook"] as const) {
    if (body[field] !== undefined && body[field] !== null) {
      throw invalidRequest(
        `${field} is not supported: Antler's agent has no graph nodes to stop at, checkpoints to fork from, or webhooks`,
        field,
        `Leave ${field} out.`,
      );
    }
  }
  if (body.after_seconds)
    throw invalidRequest("after_seconds is not supported: Antler starts a run at once", "after_seconds", "Leave it out.");
  const streamModes = parseStreamModes(body.stream_mode);
  const multitaskStrategy = oneOf(body.multitask_strategy, ["reject", "enqueue", "interrupt"] as const, "reject", "multitask_strategy", {
    rollback: ROLLBACK_REFUSAL,
  });
  const resume = body.command?.resume;
  const hasInput = body.input !== undefined && body.input !== null;
  if (body.command && Object.keys(body.command).some((key) => key !== "resume")) {
    throw invalidRequest(
      "command supports only resume (goto and update have no counterpart in Antler's agent)",
      "command",
      "Send command: { resume }.",
    );
  }
  if (resume !== undefined && hasInput) {
    throw invalidRequest("send either input or command.resume, not both", "input", "A resume's answer is the user's next message.");
  }
  const message = resume !== undefined ? resumeText(resume) : inputText(body.input);
  const context: Record<string, unknown> = { ...(body.config?.configurable ?? {}), ...(body.context ?? {}) };
  const metadata: Record<string, unknown> = { ...(body.config?.metadata ?? {}), ...(body.metadata ?? {}) };
  for (const [field, value] of [
    ["context (config.configurable and context together)", context],
    ["metadata (config.metadata and metadata together)", metadata],
  ] as const) {
    const violation = findCallerDataViolation(field, value);
    if (violation) throw new LangGraphError(400, { code: "ANTLER_ERR_LIMIT_EXCEEDED", message: violation.message, where: field });
  }
  return {
    message,
    resume: resume !== undefined,
    resumeValue: resume,
    assistantId: body.assistant_id,
    streamModes,
    subgraphs: body.stream_subgraphs === true,
    onDisconnect: oneOf(body.on_disconnect, ["cancel", "continue"] as const, "cancel", "on_disconnect"),
    onCompletion: oneOf(body.on_completion, ["delete", "keep"] as const, "delete", "on_completion"),
    ifNotExists: oneOf(body.if_not_exists, ["create", "reject"] as const, "reject", "if_not_exists"),
    multitaskStrategy,
    options: {
      userId: req.userId,
      ...(req.principal.role !== undefined ? { userRole: req.principal.role } : {}),
      traceId: req.traceId,
      // What the record has no field for, so a join (from any instance) streams what the run was started with.
      metadata: {
        ...metadata,
        [RUN_METADATA_KEY]: { assistant_id: body.assistant_id, stream_mode: streamModes, stream_subgraphs: body.stream_subgraphs === true },
      },
      multitaskStrategy,
      ...deerFlowContext(context),
    },
  };
}

/** The stream modes asked for (default `values`), or the 422 naming the supported ones. */
export function parseStreamModes(raw: string | string[] | null | undefined): StreamMode[] {
  const modes = raw === null || raw === undefined ? ["values"] : Array.isArray(raw) ? raw : [raw];
  const supported = SUPPORTED_STREAM_MODES as readonly string[];
  const unsupported = modes.filter((mode) => !supported.includes(mode));
  if (unsupported.length > 0) {
    throw invalidRequest(
      `stream_mode ${unsupported.map((m) => JSON.stringify(m.slice(0, 40))).join(", ")} is not supported; supported stream modes: ${SUPPORTED_STREAM_MODES.join(", ")}`,
      "stream_mode",
      "debug, tasks and checkpoints describe LangGraph's graph steps, which Antler's runs do not expose.",
    );
  }
  return [...new Set(modes.length === 0 ? ["values"] : modes)] as StreamMode[];
}

/**
 * DeerFlow's run context keys → Antler's run options (the table in the README). Keys Antler has no per-run
 * counterpart for stay in the context, where tools and middleware can read them.
 */
function deerFlowContext(raw: Record<string, unknown>): Pick<RunCallOptions, "model" | "agent" | "thinking" | "bootstrap" | "context"> {
  const context = { ...raw };
  const out: Pick<RunCallOptions, "model" | "agent" | "thinking" | "bootstrap" | "context"> = {};
  const model = context.model_name ?? context.model;
  if (model !== undefined) {
    if (typeof model !== "string") throw invalidRequest("context.model_name must be a model name", "context.model_name");
    out.model = model;
  }
  delete context.model_name;
  delete context.model;
  if (context.thinking_enabled !== undefined) {
    if (typeof context.thinking_enabled !== "boolean")
      throw invalidRequest("context.thinking_enabled must be true or false", "context.thinking_enabled");
    out.thinking = context.thinking_enabled;
  }
  if (context.is_plan_mode !== undefined) {
    if (typeof context.is_plan_mode !== "boolean")
      throw invalidRequest("context.is_plan_mode must be true or false", "context.is_plan_mode");
    context.plan_mode = context.is_plan_mode;
  }
  if (typeof context.agent_name === "string" && context.agent_name !== "") out.agent = context.agent_name;
  if (context.is_bootstrap === true) out.bootstrap = true;
  out.context = context;
  return out;
}

/** The text of the input's last human message: LangGraph message dicts (`type`) and `{ role, content }` alike. */
export function inputText(input: unknown): string {
  const messages = isRecord(input) && Array.isArray(input.messages) ? input.messages : undefined;
  if (!messages || messages.length === 0) {
    throw invalidRequest(
      "input.messages must hold the user's new message",
      "input.messages",
      'Send input: { messages: [{ type: "human", content: "..." }] }, or command: { resume } to answer an interrupt.',
    );
  }
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!isRecord(m)) continue;
    const kind = m.type ?? m.role;
    if (kind !== "human" && kind !== "user") continue;
    const text = contentText(m.content);
    if (text.trim() === "")
      throw invalidRequest("the last human message has no text", `input.messages[${i}].content`, "Send its text as content.");
    return text;
  }
  throw invalidRequest("input.messages has no human message", "input.messages", 'Add the user\'s message ({ type: "human", content }).');
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block) =>
      typeof block === "string" ? block : isRecord(block) && block.type === "text" && typeof block.text === "string" ? block.text : "",
    )
    .filter((text) => text !== "")
    .join("\n");
}
