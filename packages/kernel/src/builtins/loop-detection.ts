import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { z } from "zod";
import type { MiddlewareSpec } from "../pipeline/types.js";

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

const lastAi = (messages: readonly BaseMessage[]) => {
  const last = messages[messages.length - 1];
  return last && AIMessage.isInstance(last) ? last : undefined;
};

/**
 * Stops an agent that keeps making the same tool call. Per run: at `warnThreshold` identical calls the next
 * model request carries a warning; at `hardLimit` the call is dropped, tools are withheld, and the model is
 * asked once more for its final answer. The run's `stop_reason` becomes `loop_capped`.
 */
export function loopDetectionMiddleware(options: LoopDetectionOptions = {}): MiddlewareSpec {
  const warnAt = options.warnThreshold ?? 3;
  const hardAt = options.hardLimit ?? 5;
  const window = options.windowSize ?? 20;
  return {
    name: "LoopDetection",
    state: {
      _loop_history: z.array(z.string()).optional(),
      _loop_warning: z.string().nullable().optional(),
      _loop_final: z.boolean().optional(),
    },
    beforeAgent(state) {
      const dirty = (state._loop_history as string[] | undefined)?.length || state._loop_warning || state._loop_final || state.stop_reason;
      return dirty ? { _loop_history: [], _loop_warning: null, _loop_final: false, stop_reason: null } : undefined;
    },
    afterModel: {
      canJumpTo: ["model"],
      hook(state) {
        const message = lastAi(state.messages);
        if (!message) return undefined;
        const calls = message.tool_calls ?? [];
        const clearWarning = state._loop_warning ? { _loop_warning: null } : {};
        if (state._loop_final === true) {
          // The forced final answer: whatever the model tried, no more tool calls this run.
          if (calls.length === 0) return { ...clearWarning, _loop_final: false };
          return { ...clearWarning, _loop_final: false, messages: [withoutToolCalls(message)] };
        }
        if (calls.length === 0) return Object.keys(clearWarning).length ? clearWarning : undefined;
        const history = [...((state._loop_history as string[] | undefined) ?? [])];
        let worst = { name: "", count: 0 };
        for (const call of calls) {
          const signature = `${call.name}:${canonical(call.args)}`;
          history.push(signature);
          const count = history.slice(-window).filter((s) => s === signature).length;
          if (count > worst.count) worst = { name: call.name, count };
        }
        const trimmed = history.slice(-window);
        if (worst.count >= hardAt) {
          // Answer the repeated calls without running them, then send the run back to the model with tools
          // withheld. (A stripped AI message would end the run instead: createAgent exits on a tool-less reply.)
          const notice = `Not run: ${worst.name} was called with the same arguments ${worst.count} times. Tools are withdrawn for the rest of this run; answer with what you have.`;
          return {
            messages: calls.map((c) => new ToolMessage({ content: notice, tool_call_id: c.id ?? "", name: c.name, status: "error" })),
            _loop_history: trimmed,
            _loop_final: true,
            _loop_warning: `You called ${worst.name} with the same arguments ${worst.count} times. Tools are no longer available in this run: give your final answer now from what you already have.`,
            stop_reason: "loop_capped",
            jumpTo: "model",
          };
        }
        if (worst.count >= warnAt) {
          return {
            _loop_history: trimmed,
            _loop_warning: `Warning: you have called ${worst.name} with the same arguments ${worst.count} times. Repeating it will not give a different result; change approach or answer. At ${hardAt} repeats tools are withdrawn.`,
          };
        }
        return { _loop_history: trimmed, ...clearWarning };
      },
    },
    wrapModelCall(request, handler) {
      const warning = request.state._loop_warning as string | null | undefined;
      const final = request.state._loop_final === true;
      if (!warning && !final) return handler(request);
      return handler({
        ...request,
        tools: final ? [] : request.tools,
        messages: warning
          ? [...request.messages, new HumanMessage({ content: `<system_notice>${warning}</system_notice>` })]
          : request.messages,
      });
    },
  };
}

function withoutToolCalls(message: AIMessage): AIMessage {
  return new AIMessage({
    id: message.id,
    content: message.content,
    tool_calls: [],
    invalid_tool_calls: [],
    additional_kwargs: { ...message.additional_kwargs, tool_calls: undefined },
    response_metadata: { ...message.response_metadata, antler_dropped_tool_calls: (message.tool_calls ?? []).map((c) => c.name) },
    usage_metadata: message.usage_metadata,
  });
}
