import { AIMessage, type BaseMessage } from "@langchain/core/messages";

/**
 * Which earlier reasoning a provider wants back in the next request's history:
 * - `none`: never (Ollama, Qwen3 chat templates, older DeepSeek R1, which refused it);
 * - `tool_turns`: on every assistant message of a user turn in which the model called a tool, and on no other
 *   (DeepSeek's thinking mode: such a turn's reasoning must come back or the API answers 400; other turns'
 *   reasoning is ignored, so it is not sent);
 * - `all`: on every assistant message that has some.
 */
export type ReasoningPassback = "none" | "tool_turns" | "all";

/** The reasoning text a message carries: `additional_kwargs.reasoning_content`, or standard `reasoning` blocks. */
export function reasoningText(message: BaseMessage): string | undefined {
  const kwarg = message.additional_kwargs?.reasoning_content;
  if (typeof kwarg === "string") return kwarg;
  if (!Array.isArray(message.content)) return undefined;
  const parts = message.content.flatMap((block) => {
    const b = block as { type?: unknown; reasoning?: unknown };
    return b.type === "reasoning" && typeof b.reasoning === "string" ? [b.reasoning] : [];
  });
  return parts.length > 0 ? parts.join("") : undefined;
}

/**
 * For each AI message of `messages`, in order, the reasoning to send back with it under `policy`, or
 * `undefined` to send none. A `tool_turns` turn sends `""` for an AI message that has no reasoning of its own,
 * because DeepSeek wants the field on every assistant message of such a turn.
 */
export function reasoningToSendBack(messages: readonly BaseMessage[], policy: ReasoningPassback): Array<string | undefined> {
  const ai = messages.filter((m) => AIMessage.isInstance(m));
  if (policy === "none") return ai.map(() => undefined);
  if (policy === "all") return ai.map((m) => reasoningText(m));
  const out: Array<string | undefined> = [];
  let turn: AIMessage[] = [];
  const flush = () => {
    const called = turn.some((m) => (m.tool_calls?.length ?? 0) > 0);
    for (const m of turn) out.push(called ? (reasoningText(m) ?? "") : undefined);
    turn = [];
  };
  for (const m of messages) {
    if (m.getType() === "human") flush();
    else if (AIMessage.isInstance(m)) turn.push(m);
  }
  flush();
  return out;
}

/**
 * Puts each planned reasoning (from `reasoningToSendBack`) on the matching assistant message of an OpenAI-style
 * request body, as `field` (`reasoning_content` for DeepSeek and vLLM, `reasoning` for OpenRouter). Assistant
 * messages are matched in order; when their count does not match the plan the messages are left as they are.
 */
export function withReasoningSentBack<M extends { role?: unknown }>(
  wire: readonly M[],
  plan: ReadonlyArray<string | undefined>,
  field: string,
): M[] {
  // An audio reply adds an assistant message of its own that has no counterpart in the thread.
  const assistants = wire.filter((m) => m.role === "assistant" && !("audio" in m && Object.keys(m).length === 2));
  if (assistants.length !== plan.length || plan.every((r) => r === undefined)) return [...wire];
  const byMessage = new Map(assistants.map((m, i) => [m, plan[i]]));
  return wire.map((m) => {
    const reasoning = byMessage.get(m);
    return reasoning === undefined ? m : { ...m, [field]: reasoning };
  });
}
