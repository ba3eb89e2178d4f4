import { AIMessage } from "@langchain/core/messages";
import type { Logger } from "../logging.js";
import type { MiddlewareSpec } from "../pipeline/types.js";

interface Usage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/** Adds each model call's token usage to the thread's cumulative `token_usage`, and logs it with the trace id. */
export function tokenUsageMiddleware(options: { logger?: Logger } = {}): MiddlewareSpec {
  return {
    name: "TokenUsage",
    afterModel(state, runtime) {
      const last = state.messages[state.messages.length - 1];
      if (!last || !AIMessage.isInstance(last) || !last.usage_metadata) return undefined;
      const u = last.usage_metadata;
      const prior = (state.token_usage as Usage | undefined) ?? { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
      const next: Usage = {
        input_tokens: prior.input_tokens + (u.input_tokens ?? 0),
        output_tokens: prior.output_tokens + (u.output_tokens ?? 0),
        total_tokens: prior.total_tokens + (u.total_tokens ?? (u.input_tokens ?? 0) + (u.output_tokens ?? 0)),
      };
      options.logger?.debug({ usage: u, thread_id: runtime.context?.thread_id, message_id: last.id }, "model usage");
      return { token_usage: next };
    },
  };
}
