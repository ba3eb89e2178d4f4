// The channel conformance kit against the Slack provider, by Events API webhook and by Socket Mode, with the
// official SDKs pointed at the loopback Slack (HTTP Web API + Socket Mode WebSocket).
import type { ChannelSink } from "@antler/plugin-channels";
import { type ChannelTestPlatform, runChannelConformance } from "@antler/plugin-channels/testing";
import guardrailsPlugin from "@antler/plugin-guardrails";
import { SlackProvider } from "../src/index.js";
import { APP_TOKEN, BOT_TOKEN, BOT_USER, blockActions, buttonsOf, FakeSlack, messageEvent, SIGNING_SECRET } from "./slack-api-server.js";

/** The kit's chat ids are numbers (negative for groups); Slack's are D... for DMs and C... for channels. */
const slackChannel = (chatId: string, kind: "direct" | "group") => `${kind === "direct" ? "D" : "C"}${chatId.replace(/^-/, "")}`;
const kitChat = (channel: string) => (channel.startsWith("D") ? channel.slice(1) : `-${channel.slice(1)}`);

function platformOf(slack: FakeSlack, provider: SlackProvider, mode: "webhook" | "socket"): ChannelTestPlatform {
  const sent = new Map<string, { payload: unknown; kind: "events_api" | "interactive" }>();
  let envelopes = 0;
  const deliver = async (payload: unknown, kind: "events_api" | "interactive", sink: ChannelSink, retry = 0) => {
    if (mode === "socket") {
      const envelopeId = `env-${++envelopes}`;
      await slack.envelope({ envelope_id: envelopeId, type: kind, payload, retry_attempt: retry });
      await slack.acked(envelopeId);
      return;
    }
    const headers: Record<string, string> = retry > 0 ? { "x-slack-retry-num": String(retry), "x-slack-retry-reason": "http_timeout" } : {};
    const request =
      kind === "events_api"
        ? slack.eventRequest(payload, { headers })
        : slack.formRequest({ payload: JSON.stringify(payload) }, { headers });
    const response = await provider.webhook?.(request, sink);
    if (response?.status !== 200) throw new Error(`webhook answered ${response?.status}`);
  };
  return {
    async userSends(message, sink) {
      const channel = slackChannel(message.chatId, message.chatKind);
      const text = message.mentioned ? `<@${BOT_USER}> ${message.text}` : message.text;
      const event = messageEvent(slack, { channel, user: message.userId, text });
      sent.set(`${channel}:${event.ts}`, { payload: event.payload, kind: "events_api" });
      await deliver(event.payload, "events_api", sink);
      return { eventId: `${channel}:${event.ts}` };
    },
    async redeliver(eventId, sink) {
      const original = sent.get(eventId);
      if (!original) throw new Error(`no event ${eventId} was sent`);
      await deliver(original.payload, original.kind, sink, 1);
    },
    async userPresses(press, sink) {
      const channel = slackChannel(press.chatId, press.chatKind);
      const message = slack.channel(channel).find((m) => m.ts === press.messageId);
      if (!message) throw new Error(`no bot message ${press.messageId}`);
      const payload = blockActions(slack, message, press.value, press.userId);
      const action = (payload.actions as Array<{ action_ts: string }>)[0] as { action_ts: string };
      await deliver(payload, "interactive", sink);
      return { eventId: `action:${channel}:${message.ts}:${action.action_ts}` };
    },
    async messages(chatId) {
      // The kit's own sends (provider.send) use its chat id as the channel; user events use the Slack-shaped one.
      return slack.messages
        .filter((m) => m.channel === chatId || (/^[DC]/.test(m.channel) && kitChat(m.channel) === chatId))
        .map((m) => ({ id: m.ts, text: m.text, buttons: buttonsOf(m) }));
    },
    rateLimitNextSend(retryAfterSeconds) {
      slack.failNext("chat.postMessage", retryAfterSeconds);
    },
    ...(mode === "webhook"
      ? {
          forgedWebhookRequest: () =>
            slack.eventRequest({ type: "event_callback", event: { type: "message" } }, { secret: "f".repeat(32) }),
        }
      : {}),
  };
}

for (const mode of ["webhook", "socket"] as const) {
  let slack: FakeSlack;
  runChannelConformance({
    name: `slack (${mode})`,
    approvalPlugin: guardrailsPlugin,
    async create() {
      slack = await new FakeSlack().start();
      const provider = new SlackProvider({
        config: {
          bot_token: BOT_TOKEN,
          mode,
          signing_secret: SIGNING_SECRET,
          app_token: APP_TOKEN,
          api_url: slack.apiUrl,
          reply_in_thread: true,
          max_file_bytes: 1024 * 1024,
          working_reaction: "eyes",
          timestamp_tolerance_seconds: 300,
        },
      });
      return { provider, platform: platformOf(slack, provider, mode) };
    },
    close: async () => slack?.close(),
  });
}
