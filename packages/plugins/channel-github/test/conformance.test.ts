// The channel conformance kit against the GitHub provider: signed webhook deliveries in, the loopback REST API out.
// GitHub has no direct messages: the kit's "direct" message is a comment that mentions the bot, and every issue is
// a group conversation, so a comment without the mention is ignored.
import type { ChannelSink } from "@antler/plugin-channels";
import { type ChannelTestPlatform, runChannelConformance } from "@antler/plugin-channels/testing";
import { GitHubProvider } from "../src/index.js";
import { BOT_LOGIN, commentDelivery, type Delivery, deliveryRequest, FakeGitHub } from "./github-api-server.js";

const SECRET = "conformance-webhook-secret";
const HOOK = "http://127.0.0.1/channels/github/webhook";

/** The kit's chat ids are numbers (negative for groups): each is an issue of octo/demo. */
const issueOf = (chatId: string) => Math.abs(Number(chatId));

function platformOf(gh: FakeGitHub, provider: GitHubProvider): ChannelTestPlatform {
  const sent = new Map<string, Delivery>();
  const deliver = async (delivery: Delivery, sink: ChannelSink) => {
    sent.set(delivery.id, delivery);
    const response = await provider.webhook(deliveryRequest(HOOK, delivery), sink);
    if (!response.ok) throw new Error(`webhook answered ${response.status}`);
  };
  return {
    async userSends(message, sink) {
      const addressed = message.chatKind === "direct" || message.mentioned === true;
      const delivery = commentDelivery(SECRET, {
        issue: issueOf(message.chatId),
        user: { login: `user${message.userId}`, id: Number(message.userId) },
        body: addressed ? `@${BOT_LOGIN} ${message.text}` : message.text,
      });
      await deliver(delivery, sink);
      return { eventId: delivery.id };
    },
    async redeliver(eventId, sink) {
      const delivery = sent.get(eventId);
      if (!delivery) throw new Error(`no delivery ${eventId} was sent`);
      await deliver(delivery, sink);
    },
    async userPresses() {
      throw new Error("GitHub has no buttons");
    },
    async messages(chatId) {
      return gh.issueComments("octo", "demo", issueOf(chatId)).map((c) => ({ id: String(c.id), text: c.body, buttons: [] }));
    },
    rateLimitNextSend(retryAfterSeconds) {
      gh.failNext("create", { retryAfterSeconds });
    },
    forgedWebhookRequest: () => {
      const delivery = commentDelivery("not-the-secret", { issue: 1, user: { login: "mallory", id: 666 }, body: `@${BOT_LOGIN} hi` });
      return deliveryRequest(HOOK, delivery);
    },
  };
}

let gh: FakeGitHub;
runChannelConformance({
  name: "github",
  async create() {
    gh = await new FakeGitHub().start();
    const provider = new GitHubProvider({
      config: {
        token: gh.token,
        webhook_secret: SECRET,
        bot_login: BOT_LOGIN,
        api_url: gh.url,
        repository: "octo/demo",
        edit_interval_ms: 250,
      },
    });
    return { provider, platform: platformOf(gh, provider) };
  },
  close: async () => gh?.close(),
});
