import type { Logger, MiddlewareSpec } from "@antler/kernel";
import { AIMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";

interface Usage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/** Adds each model call's token usage to the thread's cumulative `token_usage`, and logs it with the trace id. */
export function tokenUsageMiddleware(options: { logger?: Logger } = {}): MiddlewareSpec {
  return {
    name: "TokenUsage",
    async wrapModelCall(request, handler) {
      const result = await handler(request);
      if (!AIMessage.isInstance(result) || !result.usage_metadata) return result;
      const u = result.usage_metadata;
      const prior = (request.state.token_usage as Usage | undefined) ?? { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
      const next: Usage = {
        input_tokens: prior.input_tokens + (u.input_tokens ?? 0),
        output_tokens: prior.output_tokens + (u.output_tokens ?? 0),
        total_tokens: prior.total_tokens + (u.total_tokens ?? (u.input_tokens ?? 0) + (u.output_tokens ?? 0)),
      };
      options.logger?.debug({ usage: u, thread_id: request.runtime.context?.thread_id, message_id: result.id }, "model usage");
      return new Command({ update: { token_usage: next } });
    },
  };
}
