import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";

/**
 * Where the thread is: `turn` counts the user messages (it changes exactly when a new turn starts) and
 * `answered` says whether the model already replied in this turn (an assistant message after the last user
 * one). Wrap-style hooks key their per-turn work on these instead of a `beforeAgent` node, which would cost a
 * graph step. Hidden context a middleware adds as a human message (`additional_kwargs.hide_from_ui`, e.g. an
 * activated skill's body) is not the user speaking, so it starts no turn.
 */
export function turnPosition(messages: readonly BaseMessage[]): { turn: number; answered: boolean } {
  let turn = 0;
  let answered = false;
  for (const m of messages) {
    if (HumanMessage.isInstance(m) && m.additional_kwargs?.hide_from_ui !== true) {
      turn++;
      answered = false;
    } else if (!answered && AIMessage.isInstance(m)) answered = true;
  }
  return { turn, answered };
}
