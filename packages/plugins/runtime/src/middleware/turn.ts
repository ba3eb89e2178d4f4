import { type BaseMessage, HumanMessage } from "@langchain/core/messages";

/**
 * The number of user messages in the thread: it changes exactly when a new turn starts. Wrap-style hooks key
 * their per-turn state on it instead of resetting it in a `beforeAgent` node, which would cost a graph step.
 * Hidden context a middleware adds as a human message (`additional_kwargs.hide_from_ui`, e.g. an activated
 * skill's body) is not the user speaking, so it starts no turn.
 */
export function turnNumber(messages: readonly BaseMessage[]): number {
  let n = 0;
  for (const m of messages) if (HumanMessage.isInstance(m) && m.additional_kwargs?.hide_from_ui !== true) n++;
  return n;
}
