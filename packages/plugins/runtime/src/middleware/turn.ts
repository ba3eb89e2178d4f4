import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";

/**
 * Where the thread is: `turn` names the current turn (the id of the user message that started it; it changes
 * exactly when a new turn starts) and `answered` says whether the model already replied in this turn (an
 * assistant message after that user message). Wrap-style hooks key their per-turn work on these instead of a
 * `beforeAgent` node, which would cost a graph step. Hidden context a middleware adds as a human message
 * (`additional_kwargs.hide_from_ui`, e.g. an activated skill's body) is not the user speaking, so it starts no
 * turn. Reads the messages of the current turn only, from the end, never the whole thread.
 */
export function turnPosition(messages: readonly BaseMessage[]): { turn: string; answered: boolean } {
  let answered = false;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (HumanMessage.isInstance(m) && m.additional_kwargs?.hide_from_ui !== true) return { turn: m.id ?? `#${i}`, answered };
    if (AIMessage.isInstance(m)) answered = true;
  }
  return { turn: "", answered };
}
