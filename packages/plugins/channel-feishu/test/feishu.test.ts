// Feishu end to end: a real gateway and AntlerClient (SQLite, scripted model), the Feishu provider on the official
// SDK pointed at a loopback server that speaks the open API. Callbacks go in encrypted and signed, as Feishu sends
// them with an encrypt key, through the gateway's webhook route; answers are read back from the cards the bot sent.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin, threadPaths } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { type ScriptedStep, scriptedModelsPlugin } from "@antler/kernel/testing";
import channels, { CHANNELS, type ChannelsHost } from "@antler/plugin-channels";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import type { BaseMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import feishu from "../src/index.js";
import {
  APP_ID,
  APP_SECRET,
  callbackRequest,
  cardActionEvent,
  encryptBody,
  FakeFeishu,
  messageEvent,
  readCard,
} from "./open-api-server.js";

const TOKEN = "feishu-verification-token";
const ENCRYPT_KEY = "feishu-encrypt-key-0123";
const ADA = "ou_ada";

const textOf = (m: BaseMessage | undefined) => (typeof m?.content === "string" ? m.content : "");

function script(messages: BaseMessage[]): ScriptedStep {
  const human = textOf(messages[messages.map((m) => m.getType()).lastIndexOf("human")]);
  const last = messages.at(-1);
  const lastTool = last?.getType() === "tool" ? (last as BaseMessage & { name?: string }).name : undefined;
  if (lastTool === "write_report")
    return { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/report.md"] } }] };
  if (lastTool === "present_files") return { text: "Here is the report." };
  if (last?.getType() !== "human") return { text: "Done." };
  if (/report/i.test(human)) return { toolCalls: [{ name: "write_report", args: { name: "report.md", text: "# Report\n" } }] };
  if (/^(red|blue)$/.test(human.trim())) return { text: `Painting it ${human.trim()}.` };
  if (/colour/i.test(human)) {
    return {
      toolCalls: [
        { name: "ask_clarification", args: { question: "Which colour?", clarification_type: "approach_choice", options: ["red", "blue"] } },
      ],
    };
  }
  if (/uploaded/i.test(human)) {
    const upload = /\/mnt\/user-data\/uploads\/[\w-]+(?:\.[\w-]+)*/.exec(messages.map(textOf).join("\n"))?.[0] ?? "(none)";
    return { text: `I see ${upload}.` };
  }
  if (/stream/i.test(human)) return { text: "A streamed **answer**.", delayMs: 1000 };
  return { text: `You said: ${human}` };
}

function reportTool(baseDir: string) {
  return definePlugin({
    name: "feishu-test-tools",
    version: "0.1.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.tools.add(
        defineTool({
          name: "write_report",
          description: "Writes a report to the outputs folder.",
          schema: z.object({ name: z.string(), text: z.string() }),
          run: async ({ name, text }, runtime) => {
            const context = (runtime as unknown as { context: Record<string, string> }).context;
            const paths = threadPaths(baseDir, context.user_id as string, context.thread_id as string);
            mkdirSync(paths.outputs, { recursive: true });
            writeFileSync(join(paths.outputs, name), text);
            return `wrote /mnt/user-data/outputs/${name}`;
          },
        }),
      );
    },
  });
}

let fs: FakeFeishu;
let client: AntlerClient;
let gateway: RunningGateway;
let host: ChannelsHost;
let baseDir: string;

beforeAll(async () => {
  fs = await new FakeFeishu().start();
  baseDir = mkdtempSync(join(tmpdir(), "antler-feishu-"));
  client = await AntlerClient.create({
    config: {
      base_dir: baseDir,
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "sqlite" },
      title: { enabled: false },
      logging: { level: "error" },
    },
    plugins: [
      scriptedModelsPlugin({ m: { respond: script } }),
      reportTool(baseDir),
      { plugin: channels, config: { stream: { edit_interval_ms: 200 }, recovery_interval_seconds: 3600 } },
      {
        plugin: feishu,
        config: { app_id: APP_ID, app_secret: APP_SECRET, verification_token: TOKEN, encrypt_key: ENCRYPT_KEY, domain: fs.url },
      },
    ],
    cwd: baseDir,
    env: {},
    discover: false,
  });
  gateway = await startGateway({
    client,
    config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: "alice-key-0123456789abcdef", user: "alice" }] } },
    shutdownGraceMs: 500,
  });
  host = client.kernel.scope.resolve(CHANNELS);
  await host.store.bind("feishu", ADA, "alice");
});

afterAll(async () => {
  await gateway?.close();
  await client?.close();
  await fs?.close();
  if (baseDir) rmSync(baseDir, { recursive: true, force: true });
});

const hook = () => `${gateway.url}/channels/feishu/webhook`;
const idle = () => host.runtime(client).idle();
const cards = (chatId: string) => fs.chat(chatId).map((m) => ({ id: m.message_id, ...readCard(m.content) }));

async function say(chatId: string, text: string, extra: { openId?: string; chatType?: "p2p" | "group"; mentionBot?: boolean } = {}) {
  const body = messageEvent(TOKEN, { chatId, chatType: extra.chatType ?? "p2p", openId: extra.openId ?? ADA, text, ...extra });
  const response = await fetch(callbackRequest(hook(), body, { encryptKey: ENCRYPT_KEY }));
  expect(response.status).toBe(200);
  await idle();
  return body;
}

describe("feishu event callbacks", () => {
  it("answers the URL challenge, encrypted, once the token inside matches", async () => {
    const challenge = { challenge: "ajls384kdjx98XX", token: TOKEN, type: "url_verification" };
    const ok = await fetch(hook(), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: encryptBody(ENCRYPT_KEY, challenge),
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ challenge: "ajls384kdjx98XX" });
    const wrong = await fetch(hook(), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: encryptBody(ENCRYPT_KEY, { ...challenge, token: "nope" }),
    });
    expect(wrong.status).toBe(401);
  });

  it("refuses a bad signature before parsing, an old timestamp, an unencrypted event and a bad token with 401", async () => {
    const body = messageEvent(TOKEN, { chatId: "oc_refused", chatType: "p2p", openId: ADA, text: "let me in" });
    const requests = [
      callbackRequest(hook(), body, { encryptKey: ENCRYPT_KEY, signWith: "wrong-key" }),
      callbackRequest(hook(), body, { raw: "{not json", signWith: "wrong-key" }),
      callbackRequest(hook(), body, { encryptKey: ENCRYPT_KEY, timestamp: Math.floor(Date.now() / 1000) - 3600 }),
      callbackRequest(hook(), body, { signWith: ENCRYPT_KEY }),
      callbackRequest(hook(), messageEvent("forged", { chatId: "oc_refused", chatType: "p2p", openId: ADA, text: "x" }), {
        encryptKey: ENCRYPT_KEY,
      }),
      new Request(hook(), { method: "POST", body: encryptBody(ENCRYPT_KEY, body) }),
    ];
    for (const request of requests) {
      const response = await fetch(request);
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_CHANNEL_UNAUTHORIZED");
    }
    expect(await host.store.event("feishu", body.header.event_id)).toBeUndefined();
    expect(fs.chat("oc_refused")).toHaveLength(0);
  });

  it("answers in one card, patched while the run streams, with the trace id on every open API call", async () => {
    const callsBefore = fs.calls.length;
    const body = messageEvent(TOKEN, { chatId: "oc_stream", chatType: "p2p", openId: ADA, text: "stream please" });
    const response = await fetch(callbackRequest(hook(), body, { encryptKey: ENCRYPT_KEY }));
    const traceId = response.headers.get("x-trace-id");
    await idle();
    const [answer, ...rest] = fs.chat("oc_stream");
    expect(rest).toHaveLength(0);
    expect(answer?.msg_type).toBe("interactive");
    expect(readCard(answer?.content ?? "{}").text).toBe("A streamed **answer**.");
    expect(answer?.history.length).toBeGreaterThanOrEqual(2);
    const event = await host.store.event("feishu", body.header.event_id);
    expect(event?.trace_id).toBe(traceId);
    const run = await client.getRun(event?.thread_id as string, event?.run_id as string, { userId: "alice" });
    expect(run.trace_id).toBe(traceId);
    const apiCalls = fs.calls.slice(callsBefore).filter((c) => c.path.startsWith("/open-apis/im/"));
    expect(apiCalls.length).toBeGreaterThanOrEqual(2);
    for (const call of apiCalls) expect(call.traceId).toBe(traceId);
  });

  it("runs a repeated event_id once", async () => {
    const body = messageEvent(TOKEN, { chatId: "oc_once", chatType: "p2p", openId: ADA, text: "only once" });
    const [a, b] = await Promise.all([
      fetch(callbackRequest(hook(), body, { encryptKey: ENCRYPT_KEY })),
      fetch(callbackRequest(hook(), body, { encryptKey: ENCRYPT_KEY })),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    await idle();
    expect((await fetch(callbackRequest(hook(), body, { encryptKey: ENCRYPT_KEY }))).status).toBe(200);
    await idle();
    expect(cards("oc_once").map((c) => c.text)).toEqual(["You said: only once"]);
    const event = await host.store.event("feishu", body.header.event_id);
    expect(await client.listRuns(event?.thread_id as string, { userId: "alice" })).toHaveLength(1);
  });

  it("shows a question as card buttons; the card action resumes the same thread and clears the buttons", async () => {
    const asked = await say("oc_card", "pick a colour");
    const question = cards("oc_card").at(-1);
    expect(question?.text).toContain("Which colour?");
    expect(question?.buttons.map((b) => b.label)).toEqual(["red", "blue"]);
    const blue = question?.buttons.find((b) => b.label === "blue")?.value as string;
    const press = cardActionEvent(TOKEN, { chatId: "oc_card", messageId: question?.id as string, openId: ADA, value: blue });
    const response = await fetch(callbackRequest(hook(), press, { encryptKey: ENCRYPT_KEY }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({});
    await idle();
    const after = cards("oc_card");
    expect(after.find((c) => c.id === question?.id)?.buttons).toEqual([]);
    expect(after.find((c) => c.id === question?.id)?.text).toContain("✔ blue");
    expect(after.at(-1)?.text).toBe("Painting it blue.");
    const first = await host.store.event("feishu", asked.header.event_id);
    const second = await host.store.event("feishu", press.header.event_id);
    expect(second?.status).toBe("answered");
    expect(second?.thread_id).toBe(first?.thread_id);
  });

  it("in a group answers only when the bot is mentioned", async () => {
    await say("oc_group", "side talk", { chatType: "group" });
    expect(fs.chat("oc_group")).toHaveLength(0);
    await say("oc_group", "what now", { chatType: "group", mentionBot: true });
    expect(cards("oc_group").map((c) => c.text)).toEqual(["You said: what now"]);
  });

  it("makes a sent file an upload the agent sees, and sends presented files as file messages", async () => {
    const body = messageEvent(TOKEN, { chatId: "oc_files", chatType: "p2p", openId: ADA, file: { key: "file_in_1", name: "notes.txt" } });
    fs.addResource(body.event.message.message_id, "file_in_1", Buffer.from("meeting notes\n"));
    expect((await fetch(callbackRequest(hook(), body, { encryptKey: ENCRYPT_KEY }))).status).toBe(200);
    await idle();
    await say("oc_files", "what did I send? (uploaded)");
    expect(cards("oc_files").at(-1)?.text).toBe("I see /mnt/user-data/uploads/notes.txt.");
    await say("oc_files", "write the report");
    const file = fs.chat("oc_files").find((m) => m.msg_type === "file");
    const key = (JSON.parse(file?.content ?? "{}") as { file_key?: string }).file_key as string;
    expect(fs.files.get(key)?.name).toBe("report.md");
    expect(fs.files.get(key)?.bytes.toString("utf8")).toBe("# Report\n");
  });

  it("waits out a 429 frequency limit (x-ogw-ratelimit-reset) and sends the answer once", async () => {
    fs.failNext("create", 1);
    const callsBefore = fs.calls.length;
    await say("oc_limit", "slow down");
    expect(cards("oc_limit").map((c) => c.text)).toEqual(["You said: slow down"]);
    const creates = fs.calls.slice(callsBefore).filter((c) => c.method === "POST" && c.path === "/open-apis/im/v1/messages");
    expect(creates.map((c) => c.status)).toEqual([429, 200]);
  });
});
