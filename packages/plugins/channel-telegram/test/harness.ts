import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { definePlugin, threadPaths } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { type CapturedLogs, captureLogs, type ScriptedStep, scriptedModelsPlugin } from "@antler/kernel/testing";
import channels, { CHANNELS, type ChannelsConfigInput, type ChannelsHost } from "@antler/plugin-channels";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import schedulerPlugin from "@antler/plugin-scheduler";
import type { BaseMessage } from "@langchain/core/messages";
import { z } from "zod";
import telegram, { type TelegramConfigInput } from "../src/index.js";
import { FakeTelegram } from "./bot-api-server.js";

export const SECRET = "s3cret-token_0123456789";

const textOf = (m: BaseMessage | undefined) => (typeof m?.content === "string" ? m.content : "");

/** The scripted model: each phrase picks a behaviour the tests pin. */
export function script(messages: BaseMessage[]): ScriptedStep {
  const lastHumanAt = messages.map((m) => m.getType()).lastIndexOf("human");
  const human = textOf(messages[lastHumanAt]);
  const last = messages.at(-1);
  const lastTool = last?.getType() === "tool" ? (last as BaseMessage & { name?: string }).name : undefined;
  if (lastTool === "lookup") return { text: "The answer is **42**.", delayMs: 600 };
  if (lastTool === "write_report")
    return { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/report.md"] } }] };
  if (lastTool === "present_files") return { text: "Here is the report." };
  if (/look it up/i.test(human)) return { text: "Let me look that up.", toolCalls: [{ name: "lookup", args: { q: "answer" } }] };
  if (/report/i.test(human)) return { toolCalls: [{ name: "write_report", args: { name: "report.md", text: "# Report\n\nAll good.\n" } }] };
  if (/^(red|blue)$/.test(human.trim())) return { text: `Painting it ${human.trim()}.` };
  if (/colour/i.test(human)) {
    return {
      toolCalls: [
        { name: "ask_clarification", args: { question: "Which colour?", clarification_type: "approach_choice", options: ["red", "blue"] } },
      ],
    };
  }
  if (/uploaded/i.test(human)) {
    const all = messages.map(textOf).join("\n");
    const upload = /\/mnt\/user-data\/uploads\/[\w.-]+/.exec(all)?.[0] ?? "(none)";
    return { text: `I see ${upload}.` };
  }
  if (/slow/i.test(human)) return { text: "Slow answer.", delayMs: 1500 };
  return { text: `You said: ${human}` };
}

/** `lookup` (answers at once) and `write_report` (writes an outputs file), for the scripted runs. */
function testTools(baseDir: string) {
  return definePlugin({
    name: "channel-test-tools",
    version: "0.1.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.tools.add(
        defineTool({ name: "lookup", description: "Looks something up.", schema: z.object({ q: z.string() }), run: async () => "42" }),
      );
      ctx.tools.add(
        defineTool({
          name: "write_report",
          description: "Writes a report to the outputs folder.",
          schema: z.object({ name: z.string(), text: z.string() }),
          run: async ({ name, text }, runtime) => {
            await sleep(10);
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

export interface TelegramHarness {
  tg: FakeTelegram;
  client: AntlerClient;
  gateway: RunningGateway;
  host: ChannelsHost;
  logs: CapturedLogs;
  baseDir: string;
  /** POSTs an update to the webhook as Telegram does. */
  post(update: unknown, secret?: string | null): Promise<Response>;
  /** Waits until every accepted event is handled. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export async function startHarness(
  options: { channels?: ChannelsConfigInput; telegram?: Partial<TelegramConfigInput>; gateway?: boolean } = {},
): Promise<TelegramHarness> {
  const tg = await new FakeTelegram().start();
  const baseDir = mkdtempSync(join(tmpdir(), "antler-telegram-"));
  const logs = captureLogs({ level: "debug" });
  const client = await AntlerClient.create({
    config: {
      base_dir: baseDir,
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "sqlite" },
      title: { enabled: false },
    },
    plugins: [
      scriptedModelsPlugin({ m: { respond: script } }),
      testTools(baseDir),
      { plugin: schedulerPlugin, config: { run_in_gateway: false } },
      { plugin: channels, config: { stream: { edit_interval_ms: 200 }, recovery_interval_seconds: 3600, ...(options.channels ?? {}) } },
      {
        plugin: telegram,
        config: {
          token: tg.token,
          mode: "webhook",
          webhook_secret: SECRET,
          api_root: tg.url,
          poll_timeout_seconds: 1,
          ...(options.telegram ?? {}),
        },
      },
    ],
    cwd: baseDir,
    env: {},
    discover: false,
    logger: logs.logger,
  });
  const gateway = await startGateway({
    client,
    config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: "alice-key-0123456789abcdef", user: "alice" }] } },
    shutdownGraceMs: 500,
  });
  const host = client.kernel.scope.resolve(CHANNELS);
  return {
    tg,
    client,
    gateway,
    host,
    logs,
    baseDir,
    post: (update, secret = SECRET) =>
      fetch(`${gateway.url}/channels/telegram/webhook`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(secret === null ? {} : { "x-telegram-bot-api-secret-token": secret }) },
        body: JSON.stringify(update),
      }),
    idle: () => host.runtime(client).idle(),
    async close() {
      await gateway.close();
      await client.close();
      await tg.close();
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
}
