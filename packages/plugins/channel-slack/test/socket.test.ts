// Socket Mode with @slack/socket-mode against the loopback Slack's WebSocket: an envelope is acknowledged only
// after the sink journaled it, so one the journal failed to take is delivered again and handled then.
import type { InboundMessage } from "@antler/plugin-channels";
import { afterEach, describe, expect, it } from "vitest";
import { SlackProvider } from "../src/index.js";
import { APP_TOKEN, BOT_TOKEN, FakeSlack, messageEvent, TEAM } from "./slack-api-server.js";

let slack: FakeSlack | undefined;
let stop: AbortController | undefined;
let receiving: Promise<void> | undefined;

afterEach(async () => {
  stop?.abort();
  await receiving;
  await slack?.close();
});

async function start(accept: (message: InboundMessage) => Promise<void>) {
  slack = await new FakeSlack().start();
  const provider = new SlackProvider({
    config: {
      bot_token: BOT_TOKEN,
      mode: "socket",
      app_token: APP_TOKEN,
      api_url: slack.apiUrl,
      reply_in_thread: true,
      max_file_bytes: 1024,
      working_reaction: null,
      timestamp_tolerance_seconds: 300,
    },
  });
  expect(provider.webhook).toBeUndefined();
  stop = new AbortController();
  receiving = provider.receive?.({ accept }, stop.signal);
  await slack.connected();
  return slack;
}

describe("slack socket mode", () => {
  it("acknowledges an envelope only once it is journaled: a failed journal leaves it to Slack's redelivery", async () => {
    const accepted: InboundMessage[] = [];
    let failNext = true;
    let tried: () => void = () => {};
    const firstTry = new Promise<void>((resolve) => {
      tried = resolve;
    });
    const s = await start(async (message) => {
      if (failNext) {
        failNext = false;
        tried();
        throw new Error("database is down");
      }
      accepted.push(message);
    });
    const event = messageEvent(s, { channel: "D0SOCK0001", user: "U0ADA0001", text: "hello over the socket" });
    await s.envelope({ envelope_id: "env-a", type: "events_api", payload: event.payload });
    await firstTry;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(s.acks).not.toContain("env-a");
    await s.envelope({ envelope_id: "env-a", type: "events_api", payload: event.payload, retry_attempt: 1 });
    await s.acked("env-a");
    expect(accepted.map((m) => [m.eventId, m.text, m.chat.kind])).toEqual([[`D0SOCK0001:${event.ts}`, "hello over the socket", "direct"]]);
    // The connection was opened with the app-level token (the loopback Slack refuses anything else).
    expect(s.calls.find((c) => c.method === "apps.connections.open")?.status).toBe(200);
  });

  it("takes slash commands from the socket as channel commands", async () => {
    const accepted: InboundMessage[] = [];
    const s = await start(async (message) => {
      accepted.push(message);
    });
    await s.envelope({
      envelope_id: "env-cmd",
      type: "slash_commands",
      payload: { command: "/status", text: "", user_id: "U0ADA0001", channel_id: "C0GENERAL1", team_id: TEAM, trigger_id: "trig.1" },
    });
    await s.acked("env-cmd");
    expect(accepted).toEqual([
      {
        eventId: "command:trig.1",
        chat: { id: "C0GENERAL1", kind: "group", workspace: TEAM },
        sender: { id: "U0ADA0001" },
        text: "/status",
        mentioned: true,
      },
    ]);
  });
});
