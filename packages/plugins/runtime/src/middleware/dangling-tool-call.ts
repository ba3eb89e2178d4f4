import type { MiddlewareSpec } from "@antler/kernel";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { messagesAfterSummary, summaryCutOf } from "./summarization.js";

export const INTERRUPTED_TOOL_RESULT =
  "This tool call was interrupted before it returned a result (the previous run ended early). Call it again if you still need it.";

/**
 * Providers reject a history where an assistant tool call has no tool result (a run cancelled mid-tool leaves
 * one behind). The request gets a placeholder result right after such a call; the stored history is untouched.
 */
export function patchDanglingToolCalls(messages: readonly BaseMessage[]): BaseMessage[] {
  const answered = new Set<string>();
  for (const m of messages) if (ToolMessage.isInstance(m)) answered.add(m.tool_call_id);
  const out: BaseMessage[] = [];
  for (const m of messages) {
    out.push(m);
    if (!AIMessage.isInstance(m)) continue;
    for (const call of m.tool_calls ?? []) {
      if (call.id && !answered.has(call.id)) {
        out.push(new ToolMessage({ content: INTERRUPTED_TOOL_RESULT, tool_call_id: call.id, name: call.name, status: "error" }));
        answered.add(call.id);
      }
    }
  }
  return out;
}

/**
 * Repairs the part of the history the model is sent. After a summary that is the kept first request and the
 * messages from the summary's cut on: this middleware hands on that part only (Summarization, further in,
 * would drop the rest from the request anyway, and finds its cut again by id), so a long summarized thread costs
 * what its tail costs. Without a summary the whole history is sent, and checked.
 */
export function danglingToolCallMiddleware(): MiddlewareSpec {
  return {
    name: "DanglingToolCall",
    wrapModelCall(request, handler) {
      const cut = summaryCutOf(request.state);
      const sent = cut?.from_id === undefined ? request.messages : messagesAfterSummary(request.messages, cut);
      const patched = patchDanglingToolCalls(sent);
      if (sent === request.messages && patched.length === sent.length) return handler(request);
      return handler({ ...request, messages: patched });
    },
  };
}
