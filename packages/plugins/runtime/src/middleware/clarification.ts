import type { MiddlewareSpec } from "@antler/kernel";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { ASK_CLARIFICATION_TOOL_NAME, clarificationMessage, createAskClarificationTool } from "../tools/ask-clarification.js";

export const CLARIFICATION_MIDDLEWARE_NAME = "Clarification";

/**
 * Whether a run may ask the user anything. Unattended runs (the scheduler sets `non_interactive`) must not:
 * nobody would answer, and the run would end waiting.
 */
export function isClarificationAllowed(context: { readonly non_interactive?: unknown } | undefined): boolean {
  return context?.non_interactive !== true;
}

const UNATTENDED_REFUSAL =
  `${ASK_CLARIFICATION_TOOL_NAME} is not available: this run is unattended and nobody can answer. ` +
  "Make the most reasonable assumption, say which one you made, and continue.";

/** Whether the tool results that end the thread (after the model's last reply) include a successful `ask_clarification`. */
function clarificationAnswered(messages: readonly BaseMessage[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    // Anything but a tool result (the user's reply, the model's call) means the question is behind us.
    if (!m || !ToolMessage.isInstance(m)) return false;
    if (m.name === ASK_CLARIFICATION_TOOL_NAME && m.status !== "error") return true;
  }
  return false;
}

/**
 * The Clarification middleware: answers every `ask_clarification` call itself, from the raw arguments, so a
 * malformed call still yields the text fallback and a form stripped of its invalid fields instead of a schema
 * error. It is always last in the chain (innermost around the tool and the model).
 *
 * It also ends the turn after a successful answer: the model call that would follow is not made, and no reply is
 * written, so the question is the thread's last message and the router after the model ends the run. (A
 * `returnDirect` tool would do the same but makes createAgent route every tool step through a conditional edge,
 * a graph step per tool call in every turn; a `Command(goto: END)` from a tool would not end the turn at all.)
 *
 * Keeping `ask_clarification` away from `non_interactive` runs is done at tool assembly: the kernel leaves the
 * tool out when `isClarificationAllowed(context)` is false, so the model never sees it. The error answer here
 * only covers a model that calls the tool anyway (remembering it from earlier turns); being an error, it does
 * not end the turn, so the run carries on.
 */
export function clarificationMiddleware(): MiddlewareSpec {
  const askClarificationTool = createAskClarificationTool();
  return {
    name: CLARIFICATION_MIDDLEWARE_NAME,
    tools: [askClarificationTool],
    wrapModelCall: (request, handler) =>
      clarificationAnswered(request.state.messages) ? new Command({ update: { messages: [] } }) : handler(request),
    wrapToolCall: (request, handler) => {
      if (request.toolCall.name !== ASK_CLARIFICATION_TOOL_NAME) return handler(request);
      const toolCallId = request.toolCall.id ?? "";
      if (!isClarificationAllowed(request.runtime?.context)) {
        return new ToolMessage({
          content: UNATTENDED_REFUSAL,
          name: ASK_CLARIFICATION_TOOL_NAME,
          tool_call_id: toolCallId,
          status: "error",
        });
      }
      return clarificationMessage(request.toolCall.args, toolCallId);
    },
  };
}
