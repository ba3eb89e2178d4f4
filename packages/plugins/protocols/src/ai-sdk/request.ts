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

export type ChatInput = { ok: true; text: string; newChat: boolean } | { ok: false; message: string; hint: string; where: string };

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
  if (last?.role !== "user") {
    return {
      ok: false,
      message: `the last message is the ${last?.role ?? "missing"}'s; a chat request must end with the user's new message`,
      hint: "Send the conversation with the user's new message last, as useChat's sendMessage does.",
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
