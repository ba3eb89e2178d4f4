import type { OutboundMessage } from "@antler/plugin-channels/contract";

/** An interactive card (message card JSON 1.0) as Feishu takes it in `im.message.create` and `patch`. */
export interface FeishuCard {
  config: { wide_screen_mode: boolean; update_multi: boolean };
  elements: Array<
    | { tag: "markdown"; content: string }
    | {
        tag: "action";
        actions: Array<{ tag: "button"; text: { tag: "plain_text"; content: string }; type: "default"; value: { v: string } }>;
      }
  >;
}

/**
 * A message as a card: its Markdown in a `markdown` element (Feishu renders the common subset), each row of buttons
 * in an `action` element. `update_multi` makes the card one shared message, which `patch` can update for everyone.
 */
export function cardOf(message: OutboundMessage): FeishuCard {
  const elements: FeishuCard["elements"] = [{ tag: "markdown", content: message.text }];
  for (const row of message.buttons ?? []) {
    elements.push({
      tag: "action",
      actions: row.map((b) => ({ tag: "button", text: { tag: "plain_text", content: b.label }, type: "default", value: { v: b.value } })),
    });
  }
  return { config: { wide_screen_mode: true, update_multi: true }, elements };
}
