// The channel conformance kit against the Feishu provider: event callbacks (encrypted and signed, or plain with the
// verification token) in, the loopback open API out.
import type { ChannelSink } from "@antler/plugin-channels";
import { type ChannelTestPlatform, runChannelConformance } from "@antler/plugin-channels/testing";
import { FeishuProvider } from "../src/index.js";
import { APP_ID, APP_SECRET, callbackRequest, cardActionEvent, FakeFeishu, messageEvent, readCard } from "./open-api-server.js";

const TOKEN = "conformance-verification-token";
const ENCRYPT_KEY = "conformance-encrypt-key";
const HOOK = "http://127.0.0.1/channels/feishu/webhook";

function platformOf(fs: FakeFeishu, provider: FeishuProvider, encrypted: boolean): ChannelTestPlatform {
  const sent = new Map<string, unknown>();
  const deliver = async (body: { header: { event_id: string } }, sink: ChannelSink) => {
    sent.set(body.header.event_id, body);
    const response = await provider.webhook(callbackRequest(HOOK, body, encrypted ? { encryptKey: ENCRYPT_KEY } : {}), sink);
    if (!response.ok) throw new Error(`webhook answered ${response.status}`);
  };
  return {
    async userSends(message, sink) {
      const body = messageEvent(TOKEN, {
        chatId: message.chatId,
        chatType: message.chatKind === "direct" ? "p2p" : "group",
        openId: message.userId,
        text: message.text,
        mentionBot: message.mentioned === true,
      });
      await deliver(body, sink);
      return { eventId: body.header.event_id };
    },
    async redeliver(eventId, sink) {
      const body = sent.get(eventId) as { header: { event_id: string } } | undefined;
      if (!body) throw new Error(`no event ${eventId} was sent`);
      await deliver(body, sink);
    },
    async userPresses(press, sink) {
      const body = cardActionEvent(TOKEN, { chatId: press.chatId, messageId: press.messageId, openId: press.userId, value: press.value });
      await deliver(body, sink);
      return { eventId: body.header.event_id };
    },
    async messages(chatId) {
      return fs.chat(chatId).map((m) => ({ id: m.message_id, ...readCard(m.content) }));
    },
    rateLimitNextSend(retryAfterSeconds) {
      fs.failNext("create", retryAfterSeconds);
    },
    forgedWebhookRequest: () =>
      encrypted
        ? callbackRequest(HOOK, messageEvent(TOKEN, { chatId: "1", chatType: "p2p", openId: "666", text: "hi" }), {
            encryptKey: ENCRYPT_KEY,
            signWith: "not-the-encrypt-key",
          })
        : callbackRequest(HOOK, messageEvent("forged-token", { chatId: "1", chatType: "p2p", openId: "666", text: "hi" })),
  };
}

for (const encrypted of [true, false]) {
  let fs: FakeFeishu;
  runChannelConformance({
    name: `feishu (${encrypted ? "encrypted" : "plain"} callbacks)`,
    async create() {
      fs = await new FakeFeishu().start();
      const provider = new FeishuProvider({
        config: {
          app_id: APP_ID,
          app_secret: APP_SECRET,
          verification_token: TOKEN,
          ...(encrypted ? { encrypt_key: ENCRYPT_KEY } : {}),
          domain: fs.url,
        },
      });
      return { provider, platform: platformOf(fs, provider, encrypted) };
    },
    close: async () => fs?.close(),
  });
}
