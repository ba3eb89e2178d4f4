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
  resume: z.array(z.unknown()).optional(),
  protocolVersion: z.string().optional(),
  parentRunId: z.string().optional(),
});

export type AgUiRunInput = z.output<typeof agUiRunInputSchema>;

export type AgUiTurn = { ok: true; text: string; newThread: boolean } | { ok: false; message: string; hint: string; where: string };

/** Roles whose messages a thread holds: any of them before the last message means the thread already exists. */
const CONVERSATION_ROLES = new Set(["user", "assistant", "tool"]);

/** The new input of a run request: the text of its last message, which must be the user's. */
export function agUiTurn(body: AgUiRunInput): AgUiTurn {
  if (body.resume !== undefined && body.resume.length > 0) {
    return {
      ok: false,
      message: "resuming an interrupt is not supported on the AG-UI endpoint",
      hint: "Antler's runs end without AG-UI interrupts; answer a clarification as the user's next message.",
      where: "resume",
    };
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
