import type { MiddlewareSpec } from "@antler/kernel";
import { AIMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";

export const TURN_CAP_MIDDLEWARE_NAME = "TurnCap";

/**
 * Caps a subagent at `maxTurns` model calls. The last allowed call runs as usual; if it still asks for tools,
 * those calls are dropped (nothing runs after it) and the run's `stop_reason` becomes `turn_capped`. Counting the
 * AI messages in state keeps it stateless: a subagent run always starts from an empty thread.
 */
export function turnCapMiddleware(maxTurns: number): MiddlewareSpec {
  return {
    name: TURN_CAP_MIDDLEWARE_NAME,
    async wrapModelCall(request, handler) {
      const done = request.state.messages.filter((m) => AIMessage.isInstance(m)).length;
      const result = await handler(request);
      if (done + 1 < maxTurns || !AIMessage.isInstance(result) || !result.tool_calls?.length) return result;
      const capped = new AIMessage({
        ...(result.id !== undefined ? { id: result.id } : {}),
        content: result.content,
        tool_calls: [],
        invalid_tool_calls: [],
        additional_kwargs: { ...result.additional_kwargs, tool_calls: undefined },
        response_metadata: { ...result.response_metadata, antler_dropped_tool_calls: result.tool_calls.map((c) => c.name) },
        ...(result.usage_metadata !== undefined ? { usage_metadata: result.usage_metadata } : {}),
      });
      return new Command({ update: { messages: [capped], stop_reason: "turn_capped" } });
    },
  };
}
