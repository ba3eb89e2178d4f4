// LangGraph interrupts over Antler's questions to the user: one model for `thread.interrupts`, a state's
// `interrupts`, the stream's and `runs.wait`'s `__interrupt__`, the run status `interrupted` and `command.resume`.
import type { AntlerClient, SerializedMessage } from "@antler/plugin-runtime";
import { invalidRequest } from "./errors.js";
import { isRecord } from "./http.js";

/** LangGraph's interrupt (`Interrupt` in `@langchain/langgraph-sdk`). */
export interface LangGraphInterrupt {
  /** The `ask_clarification` tool call's id: stable for the question, so a client can match it everywhere. */
  id: string;
  /**
   * The question as Antler's Human Input Card has it (`artifact.human_input`: `question`, `clarification_type`,
   * `kind`, `options` or `fields`, `context`), plus `text`, the question as the model reads it.
   */
  value: Record<string, unknown>;
}

const ASK_CLARIFICATION = "ask_clarification";

/**
 * How many of a thread's last messages are read to find its pending interrupt: the question is followed by no
 * more than the other tool results of its step, so a bounded tail is enough, whatever the thread's length.
 */
export const INTERRUPT_TAIL = 20;

/**
 * The interrupt a thread waits on, from its last messages (`INTERRUPT_TAIL` of them suffice): a run that asked the
 * user (`ask_clarification` answered successfully by the Clarification middleware) ends with the tool results of
 * that step last, and the user's next message answers it. Anything but a tool result after it (a reply) means there
 * is nothing to answer. `null`: nothing is pending.
 */
export function pendingInterrupt(messages: readonly SerializedMessage[]): LangGraphInterrupt | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.type !== "tool") return null;
    if (m.name === ASK_CLARIFICATION && m.status !== "error") {
      const humanInput = isRecord(m.artifact) && isRecord(m.artifact.human_input) ? m.artifact.human_input : { question: m.content };
      return { id: m.tool_call_id ?? m.id ?? ASK_CLARIFICATION, value: { ...humanInput, text: m.content } };
    }
  }
  return null;
}

/** The thread's pending interrupt, from its last `INTERRUPT_TAIL` messages (never the whole thread). */
export async function readPendingInterrupt(client: AntlerClient, userId: string, threadId: string): Promise<LangGraphInterrupt | null> {
  const thread = await client.getThread(threadId, { userId, messages: { limit: INTERRUPT_TAIL } });
  return pendingInterrupt(thread.messages);
}

/**
 * The user message a `command.resume` value becomes: text as it is; a form's answers (an object) as the
 * `name: value` lines the clarification card asks for; a number or boolean as its text.
 */
export function resumeText(resume: unknown): string {
  if (typeof resume === "string") {
    if (resume.trim() === "") throw invalidRequest("command.resume is empty", "command.resume", "Send the user's answer as text.");
    return resume;
  }
  if (typeof resume === "number" || typeof resume === "boolean") return String(resume);
  if (isRecord(resume)) {
    const lines = Object.entries(resume).map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
    if (lines.length > 0) return lines.join("\n");
  }
  throw invalidRequest(
    "command.resume must be the user's answer: text, or an object of a form's answers",
    "command.resume",
    'Send command: { resume: "<answer>" } (or { field: value, ... } for a form).',
  );
}
