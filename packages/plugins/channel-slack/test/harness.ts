import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin, threadPaths } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { type CapturedLogs, captureLogs, type ScriptedStep, scriptedModelsPlugin } from "@antler/kernel/testing";
import channels, { CHANNELS, type ChannelsConfigInput, type ChannelsHost } from "@antler/plugin-channels";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import guardrailsPlugin from "@antler/plugin-guardrails";
import { AntlerClient } from "@antler/plugin-runtime";
import type { BaseMessage } from "@langchain/core/messages";
import { z } from "zod";
import slack, { type SlackConfigInput } from "../src/index.js";
import { APP_TOKEN, BOT_TOKEN, FakeSlack, SIGNING_SECRET } from "./slack-api-server.js";

const textOf = (m: BaseMessage | undefined) => (typeof m?.content === "string" ? m.content : "");

/** The scripted model: each phrase picks a behaviour the tests pin. */
export function script(messages: BaseMessage[]): ScriptedStep {
  const human = textOf(messages[messages.map((m) => m.getType()).lastIndexOf("human")]);
  const last = messages.at(-1) as (BaseMessage & { name?: string }) | undefined;
  const lastTool = last?.getType() === "tool" ? last.name : undefined;
  if (lastTool === "lookup") return { text: "The answer is **42**.", delayMs: 600 };
  if (lastTool === "write_report")
    return { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/report.md"] } }] };
  if (lastTool === "present_files") return { text: "Here is the report." };
  if (lastTool === "deploy") return { text: `Deploy said: ${textOf(last)}` };
  if (lastTool) return { text: "Done." };
  if (/look it up/i.test(human)) return { text: "Let me look that up.", toolCalls: [{ name: "lookup", args: { q: "answer" } }] };
  if (/report/i.test(human)) return { toolCalls: [{ name: "write_report", args: { name: "report.md", text: "# Report\n\nAll good.\n" } }] };
  if (/deploy/i.test(human)) return { toolCalls: [{ name: "deploy", args: { target: "prod" } }] };
  if (/uploaded/i.test(human)) {
    const upload = /\/mnt\/user-data\/uploads\/[\w.-]+/.exec(messages.map(textOf).join("\n"))?.[0] ?? "(none)";
    return { text: `I see ${upload}.` };
  }
  return { text: `You said: ${human}` };
}

function testTools(baseDir: string) {
  return definePlugin({
    name: "slack-test-tools",
    version: "0.1.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.tools.add(
        defineTool({
          name: "lookup",
          description: "Looks something up.",
          schema: z.object({ q: z.string() }),
          run: async () => {
            await new Promise((resolve) => setTimeout(resolve, 700));
            return "42";
          },
        }),
      );
      ctx.tools.add(
        defineTool({
          name: "deploy",
          description: "Deploys.",
          schema: z.object({ target: z.string() }),
          run: async ({ target }) => `deployed ${target}`,
        }),
      );
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

export interface SlackHarness {
  slack: FakeSlack;
  client: AntlerClient;
  gateway: RunningGateway;
  host: ChannelsHost;
  logs: CapturedLogs;
  /** POSTs a request to the gateway's Slack webhook as Slack does. */
  post(request: Request): Promise<Response>;
  idle(): Promise<void>;
  close(): Promise<void>;
}

export async function startHarness(
  options: { channels?: ChannelsConfigInput; slack?: Partial<SlackConfigInput> } = {},
): Promise<SlackHarness> {
  const fake = await new FakeSlack().start();
  const baseDir = mkdtempSync(join(tmpdir(), "antler-slack-"));
  const logs = captureLogs({ level: "debug" });
  const client = await AntlerClient.create({
    config: {
      base_dir: baseDir,
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "sqlite" },
      title: { enabled: false },
      approval: { rules: [{ name: "deploys", tools: ["deploy"], reason: "Deploys need a yes" }] },
    },
    plugins: [
      guardrailsPlugin,
      scriptedModelsPlugin({ m: { respond: script } }),
      testTools(baseDir),
      { plugin: channels, config: { stream: { edit_interval_ms: 200 }, recovery_interval_seconds: 3600, ...(options.channels ?? {}) } },
      {
        plugin: slack,
        config: {
          bot_token: BOT_TOKEN,
          mode: "webhook",
          signing_secret: SIGNING_SECRET,
          app_token: APP_TOKEN,
          api_url: fake.apiUrl,
          ...(options.slack ?? {}),
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
    slack: fake,
    client,
    gateway,
    host,
    logs,
    post: async (request) =>
      fetch(`${gateway.url}/channels/slack/webhook`, {
        method: "POST",
        headers: request.headers,
        body: await request.text(),
      }),
    idle: () => host.runtime(client).idle(),
    async close() {
      await gateway.close();
      await client.close();
      await fake.close();
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
}
