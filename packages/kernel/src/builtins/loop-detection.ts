import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import type { MiddlewareSpec } from "../pipeline/types.js";
import { turnNumber } from "./turn.js";

export interface LoopDetectionOptions {
  /** Identical calls (same tool, same arguments) in one run before the model is warned. */
  warnThreshold?: number;
  /** Identical calls before tools are taken away and a final answer is forced. */
  hardLimit?: number;
  /** How many recent calls are compared. */
  windowSize?: number;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const loopField = z.object({ turn: z.number(), history: z.array(z.string()), warning: z.string().nullable() }).optional();
type LoopState = NonNullable<z.output<typeof loopField>>;

const notice = (text: string) => new HumanMessage({ content: `<system_notice>${text}</system_notice>` });

/**
 * Stops an agent that keeps making the same tool call. Per turn: at `warnThreshold` identical calls the next
 * model request carries a warning; at `hardLimit` the repeated call is not run: the model is asked again,
 * without tools, for its final answer, and the run's `stop_reason` becomes `loop_capped`. Wrap-style: no graph
 * step is added.
 */
export function loopDetectionMiddleware(options: LoopDetectionOptions = {}): MiddlewareSpec {
  const warnAt = options.warnThreshold ?? 3;
  const hardAt = options.hardLimit ?? 5;
  const window = options.windowSize ?? 20;
  return {
    name: "LoopDetection",
    state: { _loop: loopField },
    async wrapModelCall(request, handler) {
      const turn = turnNumber(request.state.messages);
      const saved = request.state._loop as LoopState | undefined;
      const current: LoopState = saved?.turn === turn ? saved : { turn, history: [], warning: null };
      // A new turn clears the previous run's stop reason.
      const resetStop = saved?.turn !== turn && request.state.stop_reason ? { stop_reason: null } : {};
      const result = await handler(current.warning ? { ...request, messages: [...request.messages, notice(current.warning)] } : request);
      if (!AIMessage.isInstance(result)) return result;
      const calls = result.tool_calls ?? [];
      // Nothing to record: a final answer in a turn already tracked, with no warning to clear.
      if (calls.length === 0 && saved?.turn === turn && !current.warning) return result;
      const history = [...current.history];
      let worst = { name: "", count: 0 };
      for (const call of calls) {
        const signature = `${call.name}:${canonical(call.args)}`;
        history.push(signature);
        const count = history.slice(-window).filter((s) => s === signature).length;
        if (count > worst.count) worst = { name: call.name, count };
      }
      const next: LoopState = { turn, history: history.slice(-window), warning: null };
      if (worst.count >= hardAt) {
        // Do not run the repeated call: ask once more, with tools withdrawn, for the final answer.
        const text = `You were about to call ${worst.name} with the same arguments for the ${worst.count}th time. Tools are withdrawn for the rest of this turn: give your final answer now from what you already have.`;
        const final = await handler({ ...request, tools: [], messages: [...request.messages, notice(text)] });
        const answer = AIMessage.isInstance(final)
          ? withoutToolCalls(
              final,
              calls.map((c) => c.name),
            )
          : final;
        return new Command({ update: { messages: [answer], _loop: next, stop_reason: "loop_capped" } });
      }
      if (worst.count >= warnAt) {
        next.warning = `Warning: you have called ${worst.name} with the same arguments ${worst.count} times. Repeating it will not give a different result; change approach or answer. At ${hardAt} repeats tools are withdrawn.`;
      }
      return new Command({ update: { _loop: next, ...resetStop } });
    },
  };
}

function withoutToolCalls(message: AIMessage, dropped: string[]): AIMessage {
  if (!message.tool_calls?.length) return message;
  return new AIMessage({
    id: message.id,
    content: message.content,
    tool_calls: [],
    invalid_tool_calls: [],
    additional_kwargs: { ...message.additional_kwargs, tool_calls: undefined },
    response_metadata: { ...message.response_metadata, antler_dropped_tool_calls: dropped },
    usage_metadata: message.usage_metadata,
  });
}
