// The channel conformance kit against the Telegram provider, in both delivery modes, with the loopback Bot API.
import type { ChannelSink } from "@antler/plugin-channels";
import { type ChannelTestPlatform, runChannelConformance } from "@antler/plugin-channels/testing";
import guardrailsPlugin from "@antler/plugin-guardrails";
import { TelegramProvider } from "../src/index.js";
import { BOT, FakeTelegram, pressUpdate, textUpdate } from "./bot-api-server.js";

const SECRET = "conformance-secret-0123456789";

function platformOf(tg: FakeTelegram, provider: TelegramProvider, mode: "webhook" | "polling"): ChannelTestPlatform {
  const sent = new Map<string, Record<string, unknown> & { update_id: number }>();
  const deliver = async (update: Record<string, unknown> & { update_id: number }, sink: ChannelSink) => {
    sent.set(String(update.update_id), update);
    if (mode === "polling") {
      tg.queueUpdate(update);
      return;
    }
    const request = new Request("http://127.0.0.1/channels/telegram/webhook", {
      method: "POST",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": SECRET },
      body: JSON.stringify(update),
    });
    const response = await provider.webhook?.(request, sink);
    if (response?.status !== 200) throw new Error(`webhook answered ${response?.status}`);
  };
  const chatOf = (chatId: string, kind: "direct" | "group") => ({ id: Number(chatId), type: kind === "direct" ? "private" : "supergroup" });
  return {
    async userSends(message, sink) {
      const mention = `@${BOT.username}`;
      const text = message.mentioned ? `${mention} ${message.text}` : message.text;
      const update = textUpdate(tg, {
        text,
        from: { id: Number(message.userId), username: `user${message.userId}` },
        chat: chatOf(message.chatId, message.chatKind),
        ...(message.mentioned ? { entities: [{ type: "mention", offset: 0, length: mention.length }] } : {}),
      });
      await deliver(update, sink);
      return { eventId: String(update.update_id) };
    },
    async redeliver(eventId, sink) {
      const update = sent.get(eventId);
      if (!update) throw new Error(`no update ${eventId} was sent`);
      await deliver(update, sink);
    },
    async userPresses(press, sink) {
      tg.rememberChat(press.chatId, press.chatKind === "direct" ? "private" : "supergroup");
      const message = tg.chat(press.chatId).find((m) => String(m.message_id) === press.messageId);
      if (!message) throw new Error(`no bot message ${press.messageId}`);
      const update = pressUpdate(tg, message, press.value, { id: Number(press.userId), username: `user${press.userId}` });
      await deliver(update, sink);
      return { eventId: String(update.update_id) };
    },
    async messages(chatId) {
      return tg.chat(chatId).map((m) => ({
        id: String(m.message_id),
        text: m.text ?? "",
        buttons: (m.reply_markup?.inline_keyboard ?? []).flat().map((b) => ({ label: b.text, value: b.callback_data })),
      }));
    },
    rateLimitNextSend(retryAfterSeconds) {
      tg.failNext("sendMessage", retryAfterSeconds);
    },
    ...(mode === "webhook"
      ? {
          forgedWebhookRequest: () =>
            new Request("http://127.0.0.1/channels/telegram/webhook", {
              method: "POST",
              headers: { "x-telegram-bot-api-secret-token": "forged-secret-0123456789" },
              body: JSON.stringify({ update_id: 1, message: { text: "hi" } }),
            }),
        }
      : {}),
  };
}

for (const mode of ["webhook", "polling"] as const) {
  let tg: FakeTelegram;
  runChannelConformance({
    name: `telegram (${mode})`,
    approvalPlugin: guardrailsPlugin,
    async create() {
      tg = await new FakeTelegram().start();
      const provider = new TelegramProvider({
        config: { token: tg.token, mode, webhook_secret: SECRET, api_root: tg.url, poll_timeout_seconds: 1 },
      });
      return { provider, platform: platformOf(tg, provider, mode) };
    },
    close: async () => tg?.close(),
  });
}
