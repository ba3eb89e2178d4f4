import { z } from "zod";

// What the AI SDK's `DefaultChatTransport` posts: `{ id, messages, trigger, messageId }` plus whatever the
// application adds through the transport's `body` option (kept, unread). Parts are the SDK's; only `text` parts of
// the last user message are read, the rest of the history is what the client shows and the thread already holds.
const uiMessagePartSchema = z.looseObject({ type: z.string().min(1) });

const uiMessageSchema = z.looseObject({
  id: z.string(),
  role: z.enum(["system", "user", "assistant"]),
  parts: z.array(uiMessagePartSchema).max(10_000),
});

export const aiSdkChatRequestSchema = z.looseObject({
  id: z.string().min(1).max(200).describe("The chat id: the Antler thread id."),
  messages: z.array(uiMessageSchema).min(1).max(100_000),
  trigger: z.enum(["submit-message", "regenerate-message"]).optional(),
  messageId: z.string().optional(),
  on_disconnect: z
    .enum(["cancel", "continue"])
    .optional()
    .describe(
      'What a hang-up does to the run: "cancel" (default: stop() in useChat stops it) or "continue" (it runs on, for resume: true; stop it with DELETE <prefix>/chat/:id/stream). Sent through the transport\'s `body`.',
    ),
});

export type AiSdkChatRequest = z.output<typeof aiSdkChatRequestSchema>;

export type ChatInput =
  | { ok: true; text: string; newChat: boolean }
  /** The assistant message last, its tool parts answered with `addToolApprovalResponse`: decisions by tool call id. */
  | { ok: true; resume: { decisions: Record<string, Record<string, unknown>> } }
  | { ok: false; message: string; hint: string; where: string };

type UiPart = AiSdkChatRequest["messages"][number]["parts"][number];

/** A tool part (`tool-<name>` or `dynamic-tool`) that `addToolApprovalResponse` answered. */
function approvalResponse(part: UiPart): { toolCallId: string; approved: boolean; reason?: string } | undefined {
  if (!(part.type.startsWith("tool-") || part.type === "dynamic-tool") || part.state !== "approval-responded") return undefined;
  const approval = part.approval as { approved?: unknown; reason?: unknown } | undefined;
  if (typeof part.toolCallId !== "string" || typeof approval?.approved !== "boolean") return undefined;
  return {
    toolCallId: part.toolCallId,
    approved: approval.approved,
    ...(typeof approval.reason === "string" && approval.reason !== "" ? { reason: approval.reason } : {}),
  };
}

/**
 * The decisions of an approval round trip: `useChat` sends the chat again with the assistant message last, whose
 * tool parts `addToolApprovalResponse` moved to `approval-responded`. Undefined when the last message has none.
 */
function approvalDecisions(last: AiSdkChatRequest["messages"][number]): Record<string, Record<string, unknown>> | undefined {
  const decisions: Record<string, Record<string, unknown>> = {};
  for (const part of last.parts) {
    const response = approvalResponse(part);
    if (!response) continue;
    decisions[response.toolCallId] = response.approved
      ? { decision: "approve" }
      : { decision: "reject", ...(response.reason ? { reason: response.reason } : {}) };
  }
  return Object.keys(decisions).length > 0 ? decisions : undefined;
}

/** The new input of a chat request: the text of its last message, which must be the user's. */
export function chatInput(body: AiSdkChatRequest): ChatInput {
  if (body.trigger === "regenerate-message") {
    return {
      ok: false,
      message: "regenerating an assistant message is not supported",
      hint: "Send the user's message again (sendMessage) to get a new answer; the thread keeps every earlier turn.",
      where: "trigger",
    };
  }
  const last = body.messages[body.messages.length - 1];
  const decisions = last?.role === "assistant" ? approvalDecisions(last) : undefined;
  if (decisions) return { ok: true, resume: { decisions } };
  if (last?.role !== "user") {
    return {
      ok: false,
      message: `the last message is the ${last?.role ?? "missing"}'s; a chat request must end with the user's new message`,
      hint: "Send the conversation with the user's new message last, as useChat's sendMessage does (or, after a run paused for approval, the assistant message with its tool parts answered by addToolApprovalResponse).",
      where: `messages[${body.messages.length - 1}].role`,
    };
  }
  const text = last.parts
    .filter((part): part is typeof part & { text: string } => part.type === "text" && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
  if (text.trim() === "") {
    return {
      ok: false,
      message: "the user's message has no text part",
      hint: "Send the message as text ({ type: 'text', text }); files go through POST /api/threads/{id}/uploads first.",
      where: `messages[${body.messages.length - 1}].parts`,
    };
  }
  return { ok: true, text, newChat: body.messages.length === 1 };
}
