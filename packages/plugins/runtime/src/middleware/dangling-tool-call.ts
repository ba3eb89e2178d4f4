import type { MiddlewareSpec } from "@antler/kernel";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";

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

export function danglingToolCallMiddleware(): MiddlewareSpec {
  return {
    name: "DanglingToolCall",
    wrapModelCall(request, handler) {
      const patched = patchDanglingToolCalls(request.messages);
      return handler(patched.length === request.messages.length ? request : { ...request, messages: patched });
    },
  };
}
