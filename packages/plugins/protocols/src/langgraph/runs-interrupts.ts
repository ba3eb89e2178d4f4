import type { SerializedMessage } from "@antler/plugin-runtime";
import { invalidRun, isRecord } from "./runs-wire.js";

/** LangGraph's interrupt as `values.__interrupt__` and `thread.interrupts` carry it. */
export interface LangGraphInterrupt {
  /** The `ask_clarification` tool call's id: stable for the question, so a client can match it. */
  id: string;
  /** The question as Antler's Human Input Card has it (`artifact.human_input`: question, kind, options, fields). */
  value: Record<string, unknown>;
}

const ASK_CLARIFICATION = "ask_clarification";

/**
 * The interrupt a thread waits on, from its last messages: a run that asked the user (`ask_clarification`
 * answered successfully by the Clarification middleware) ends with that tool message last, and the user's next
 * message answers it. Anything after it (a reply) means there is nothing to answer. Human-approval pauses join
 * here once the runtime has them.
 */
export function pendingInterrupt(messages: readonly SerializedMessage[]): LangGraphInterrupt | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.type !== "tool") return null;
    if (m.name === ASK_CLARIFICATION && m.status !== "error") {
      const humanInput = isRecord(m.artifact) && isRecord(m.artifact.human_input) ? m.artifact.human_input : { question: m.content };
      return { id: m.tool_call_id ?? m.id ?? "clarification", value: { ...humanInput, text: m.content } };
    }
  }
  return null;
}

/**
 * The user message a `command.resume` value becomes: text as it is; a form's answers (an object) as the
 * `name: value` lines the clarification card asks for; a number or boolean as its text.
 */
export function resumeText(resume: unknown): string {
  if (typeof resume === "string") {
    if (resume.trim() === "") throw invalidRun("command.resume is empty", "command.resume", "Send the user's answer as text.");
    return resume;
  }
  if (typeof resume === "number" || typeof resume === "boolean") return String(resume);
  if (isRecord(resume)) {
    const lines = Object.entries(resume).map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
    if (lines.length > 0) return lines.join("\n");
  }
  throw invalidRun(
    "command.resume must be the user's answer: text, or an object of a form's answers",
    "command.resume",
    'Send command: { resume: "<answer>" } (or { field: value, ... } for a form).',
  );
}
