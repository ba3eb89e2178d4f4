// The third-party channel of docs/plugins/channels.md (test/fixtures/room-channel.ts, under 40 lines) passes the conformance kit
// against a loopback chat service: a provider without edits, buttons or files, by webhook.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
// The guardrails plugin is a root devDependency: as this package's own it would close a cycle through the scheduler.
import guardrailsPlugin from "@antler/plugin-guardrails";
import { runChannelConformance, type TestUserMessage } from "../src/testing/index.js";
import { roomChannel } from "./fixtures/room-channel.js";

const SECRET = "room-secret";

/** The chat service: keeps the bot's messages per room; answers 429 with Retry-After when told to. */
async function startRoomService() {
  const messages: Array<{ id: string; room: string; text: string }> = [];
  let limitNext = 0;
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/messages") return void res.writeHead(404).end();
      if (limitNext > 0) {
        res.writeHead(429, { "retry-after": String(limitNext) }).end();
        limitNext = 0;
        return;
      }
      const { room, text } = JSON.parse(body) as { room: string; text: string };
      const message = { id: `m${messages.length + 1}`, room, text };
      messages.push(message);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: message.id }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    messages,
    limit: (seconds: number) => {
      limitNext = seconds;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let service: Awaited<ReturnType<typeof startRoomService>>;
let seq = 0;
const sent = new Map<string, unknown>();

function request(event: unknown, secret = SECRET): Request {
  return new Request("http://127.0.0.1/channels/room/webhook", {
    method: "POST",
    headers: { "x-room-secret": secret },
    body: JSON.stringify(event),
  });
}

runChannelConformance({
  name: "docs room channel",
  approvalPlugin: guardrailsPlugin,
  async create() {
    service = await startRoomService();
    const provider = roomChannel(service.url, SECRET);
    const deliver = async (event: unknown, sink: Parameters<NonNullable<typeof provider.webhook>>[1]) => {
      const response = await provider.webhook?.(request(event), sink);
      if (response?.status !== 204) throw new Error(`webhook answered ${response?.status}`);
    };
    const toEvent = (m: TestUserMessage) => ({
      id: `ev-${++seq}`,
      room: m.chatId,
      user: m.userId,
      text: m.mentioned ? `@antler ${m.text}` : m.text,
      direct: m.chatKind === "direct",
    });
    return {
      provider,
      platform: {
        async userSends(message, sink) {
          const event = toEvent(message);
          sent.set(event.id, event);
          await deliver(event, sink);
          return { eventId: event.id };
        },
        async redeliver(eventId, sink) {
          await deliver(sent.get(eventId), sink);
        },
        async userPresses() {
          throw new Error("the room service has no buttons");
        },
        async messages(chatId) {
          return service.messages.filter((m) => m.room === chatId).map((m) => ({ id: m.id, text: m.text, buttons: [] }));
        },
        rateLimitNextSend: (seconds) => service.limit(seconds),
        forgedWebhookRequest: () => request({ id: "forged", room: "1", user: "1", text: "hi", direct: true }, "wrong"),
      },
    };
  },
  close: async () => service?.close(),
});
