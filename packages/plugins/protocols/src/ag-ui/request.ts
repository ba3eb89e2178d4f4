import { callerDataSchema } from "@antler/plugin-gateway/caller-data";
import { z } from "zod";

// What `HttpAgent` posts: AG-UI's `RunAgentInput`. Messages are AG-UI's; only the last one (the user's) is read, the
// rest is what the client shows and the thread already holds. Unknown fields are kept and ignored, as AG-UI's own
// schemas do.
const messageSchema = z.looseObject({
  id: z.string(),
  role: z.enum(["developer", "system", "assistant", "user", "tool", "activity", "reasoning"]),
  content: z.unknown().optional(),
});

/** The `forwardedProps` Antler reads, named as in the native run request (`POST /api/threads/{id}/runs/stream`). */
export const agUiForwardedPropsSchema = z.looseObject({
  model: z.string().min(1).max(200).optional().describe("A `models:` name for this run (default: the agent's, then the default model)."),
  agent_name: z.string().min(1).max(64).optional().describe("A custom agent of the caller."),
  thinking_enabled: z.boolean().optional().describe("Extended thinking for this run, on a model that supports it."),
  context: callerDataSchema("forwardedProps.context").optional().describe("Run context, as the native run request's `context`."),
  metadata: callerDataSchema("forwardedProps.metadata").optional().describe("Stored on the run record."),
});

export const agUiRunInputSchema = z.looseObject({
  threadId: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/, "1–128 letters, digits, '.', '_', '@' and '-', starting with a letter or digit")
    .describe("The Antler thread id."),
  runId: z.string().max(200).describe("Used as the Antler run id when it is a UUID not used before."),
  messages: z.array(messageSchema).min(1).max(100_000),
  tools: z
    .array(z.looseObject({ name: z.string() }))
    .max(1000)
    .optional(),
  context: z.array(z.unknown()).max(1000).optional(),
  state: z.unknown().optional(),
  forwardedProps: agUiForwardedPropsSchema.optional(),
  resume: z
    .array(
      z.looseObject({
        interruptId: z.string().min(1),
        status: z.enum(["resolved", "cancelled"]),
        payload: z.unknown().optional(),
      }),
    )
    .max(1000)
    .optional()
    .describe("Answers to the interrupts of a run paused for approval (one entry per pending call)."),
  protocolVersion: z.string().optional(),
  parentRunId: z.string().optional(),
});

export type AgUiRunInput = z.output<typeof agUiRunInputSchema>;

export type AgUiTurn =
  | { ok: true; text: string; newThread: boolean }
  /** `resume`: the decisions (by tool call id) that continue the thread's paused run. */
  | { ok: true; resume: { decisions: Record<string, Record<string, unknown>> } }
  | { ok: false; message: string; hint: string; where: string };

const RESUME_HINT =
  'Answer each interrupt of RUN_FINISHED\'s outcome: { interruptId, status: "resolved", payload: { approved: true } } (or ' +
  '{ approved: false, reason }, { approved: true, editedArgs }), or status "cancelled" to reject it.';

/** One resume entry as the runtime's approval decision: AG-UI's `approved` payload, or Antler's own `{ decision }`. */
function entryDecision(
  entry: NonNullable<AgUiRunInput["resume"]>[number],
  where: string,
): { ok: true; decision: Record<string, unknown> } | { ok: false; message: string; hint: string; where: string } {
  if (entry.status === "cancelled") return { ok: true, decision: { decision: "reject", reason: "the user cancelled this call" } };
  const payload = entry.payload;
  if (typeof payload === "object" && payload !== null && !Array.isArray(payload)) {
    const p = payload as Record<string, unknown>;
    if (typeof p.decision === "string") return { ok: true, decision: p };
    if (typeof p.approved === "boolean") {
      if (!p.approved) return { ok: true, decision: { decision: "reject", ...(typeof p.reason === "string" ? { reason: p.reason } : {}) } };
      const edited = p.editedArgs;
      if (edited !== undefined) {
        if (typeof edited !== "object" || edited === null || Array.isArray(edited)) {
          return {
            ok: false,
            message: "editedArgs must be an object of the tool's arguments",
            hint: RESUME_HINT,
            where: `${where}.payload.editedArgs`,
          };
        }
        return { ok: true, decision: { decision: "edit", args: edited } };
      }
      return { ok: true, decision: { decision: "approve" } };
    }
  }
  return {
    ok: false,
    message: "a resolved approval interrupt needs a payload with `approved` (a boolean)",
    hint: RESUME_HINT,
    where: `${where}.payload`,
  };
}

/** Roles whose messages a thread holds: any of them before the last message means the thread already exists. */
const CONVERSATION_ROLES = new Set(["user", "assistant", "tool"]);

/** The new input of a run request: the text of its last message, which must be the user's. */
export function agUiTurn(body: AgUiRunInput): AgUiTurn {
  if (body.resume !== undefined && body.resume.length > 0) {
    const decisions: Record<string, Record<string, unknown>> = {};
    for (const [i, entry] of body.resume.entries()) {
      const decided = entryDecision(entry, `resume[${i}]`);
      if (!decided.ok) return decided;
      decisions[entry.interruptId] = decided.decision;
    }
    return { ok: true, resume: { decisions } };
  }
  const lastIndex = body.messages.length - 1;
  const last = body.messages[lastIndex];
  if (last?.role !== "user") {
    const hint =
      last?.role === "tool"
        ? "Antler runs its tools on the server and never calls the client's tools (`tools`), so there is no tool result to send."
        : "Send the conversation with the user's new message last, as HttpAgent does after addMessage.";
    return {
      ok: false,
      message: `the last message is the ${last?.role ?? "missing"}'s; a run starts from the user's new message`,
      hint,
      where: `messages[${lastIndex}].role`,
    };
  }
  const text = messageText(last.content);
  if (text.trim() === "") {
    return {
      ok: false,
      message: "the user's message has no text",
      hint: "Send the message as a string or as text parts ({ type: 'text', text }); files go through POST /api/threads/{id}/uploads first.",
      where: `messages[${lastIndex}].content`,
    };
  }
  const newThread = !body.messages.slice(0, lastIndex).some((message) => CONVERSATION_ROLES.has(message.role));
  return { ok: true, text, newThread };
}

function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part): part is { type: "text"; text: string } => part?.type === "text" && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
}
