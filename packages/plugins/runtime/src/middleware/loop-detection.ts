import type { MiddlewareSpec } from "@antler/kernel";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";

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

const notice = (text: string) => new HumanMessage({ content: `<system_notice>${text}</system_notice>` });

type Call = { name: string; args: unknown };

/**
 * The tool calls the model made in the current turn (everything after the last user message), oldest first,
 * and the calls of the latest assistant message.
 */
function turnCalls(messages: readonly BaseMessage[]): { history: Call[]; latest: Call[] } {
  let start = messages.length;
  while (start > 0 && !HumanMessage.isInstance(messages[start - 1])) start--;
  const history: Call[] = [];
  let latest: Call[] = [];
  for (let i = start; i < messages.length; i++) {
    const m = messages[i];
    if (!AIMessage.isInstance(m)) continue;
    latest = m.tool_calls ?? [];
    history.push(...latest);
  }
  return { history, latest };
}

function signatureOf(call: Call): string {
  return `${call.name}:${canonical(call.args)}`;
}

/** The most repeated of `calls`, counted over the last `window` calls of `history` plus `calls` themselves. */
function worstRepeat(history: readonly Call[], calls: readonly Call[], window: number) {
  const seen = history.slice(-window).map(signatureOf);
  let worst = { name: "", count: 0 };
  for (const call of calls) {
    const signature = signatureOf(call);
    seen.push(signature);
    const count = seen.slice(-window).filter((s) => s === signature).length;
    if (count > worst.count) worst = { name: call.name, count };
  }
  return worst;
}

/**
 * Stops an agent that keeps making the same tool call. Per turn: at `warnThreshold` identical calls the next
 * model request carries a warning; at `hardLimit` the repeated call is not run: the model is asked again,
 * without tools, for its final answer, and the run's `stop_reason` becomes `loop_capped`. Wrap-style and
 * stateless: the turn's calls are read from its messages (everything after the last user message), so no graph
 * step and no state write is added.
 */
export function loopDetectionMiddleware(options: LoopDetectionOptions = {}): MiddlewareSpec {
  const warnAt = options.warnThreshold ?? 3;
  const hardAt = options.hardLimit ?? 5;
  const window = options.windowSize ?? 20;
  // A turn with fewer calls than this cannot repeat one often enough to matter: no signatures are computed.
  const least = Math.min(warnAt, hardAt);
  return {
    name: "LoopDetection",
    async wrapModelCall(request, handler) {
      const { history, latest } = turnCalls(request.state.messages);
      // The previous model call's repeats, if they reached the warning threshold, are pointed out now.
      const previous =
        latest.length > 0 && history.length >= least
          ? worstRepeat(history.slice(0, history.length - latest.length), latest, window)
          : undefined;
      const warning =
        previous && previous.count >= warnAt
          ? `Warning: you have called ${previous.name} with the same arguments ${previous.count} times. Repeating it will not give a different result; change approach or answer. At ${hardAt} repeats tools are withdrawn.`
          : null;
      // The first model call of a turn clears the previous run's stop reason.
      const resetStop = history.length === 0 && request.state.stop_reason ? { stop_reason: null } : undefined;
      const result = await handler(warning ? { ...request, messages: [...request.messages, notice(warning)] } : request);
      if (!AIMessage.isInstance(result)) return result;
      const calls = result.tool_calls ?? [];
      const worst =
        calls.length > 0 && history.length + calls.length >= least ? worstRepeat(history, calls, window) : { name: "", count: 0 };
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
        return new Command({ update: { messages: [answer], stop_reason: "loop_capped" } });
      }
      return resetStop ? new Command({ update: resetStop }) : result;
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
