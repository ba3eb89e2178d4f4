import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { captureLogs, scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import consolePlugin, { CONSOLE_SPAN_EVENT, type ConsoleSpan } from "../src/index.js";

const tools = definePlugin({
  name: "span-test-tools",
  version: "0.1.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(
      defineTool({
        name: "slow_echo",
        description: "Echoes after a pause.",
        schema: z.object({ text: z.string() }),
        run: async ({ text }) => {
          await new Promise((r) => setTimeout(r, 80));
          return text;
        },
      }),
    );
    // A middleware with a slow node hook: it belongs on the timeline next to the calls it delays.
    ctx.middleware.add({
      name: "SlowHook",
      beforeModel: async () => {
        await new Promise((r) => setTimeout(r, 30));
        return undefined;
      },
    });
    ctx.tools.add(
      defineTool({
        name: "broken",
        description: "Always fails.",
        schema: z.object({}),
        run: () => {
          throw new Error("broken on purpose");
        },
      }),
    );
  },
});

const clients: AntlerClient[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function spansOfOneTurn(consoleConfig: Record<string, unknown>): Promise<ConsoleSpan[]> {
  const dir = mkdtempSync(join(tmpdir(), "antler-console-spans-"));
  dirs.push(dir);
  const client = await AntlerClient.create({
    config: { base_dir: dir, models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
    plugins: [
      scriptedModelsPlugin({
        m: [
          {
            toolCalls: [
              { name: "slow_echo", args: { text: "hi" }, id: "call-echo" },
              { name: "broken", args: {}, id: "call-broken" },
            ],
          },
          { text: "done" },
        ],
      }),
      tools,
      { plugin: consolePlugin, config: consoleConfig },
    ],
    cwd: dir,
    env: {},
    discover: false,
    logger: captureLogs({ level: "warn" }).logger,
  });
  clients.push(client);
  const spans: ConsoleSpan[] = [];
  for await (const event of client.stream("go", { threadId: "t1" })) {
    if (event.type === "custom" && event.data.type === CONSOLE_SPAN_EVENT) spans.push(event.data as unknown as ConsoleSpan);
  }
  return spans;
}

describe("console_span events for the run timeline", () => {
  it("emits one span per model call and per tool call, with its start, duration and outcome", async () => {
    const spans = await spansOfOneTurn({});
    expect(spans.filter((s) => s.kind === "model").map((s) => s.name)).toEqual(["m", "m"]);
    const echo = spans.find((s) => s.tool_call_id === "call-echo");
    expect(echo).toMatchObject({ kind: "tool", name: "slow_echo", status: "success" });
    expect(echo?.duration_ms).toBeGreaterThanOrEqual(70);
    expect(spans.find((s) => s.tool_call_id === "call-broken")).toMatchObject({ kind: "tool", name: "broken", status: "error" });
    for (const s of spans) {
      expect(s.started_at).toBeGreaterThan(Date.now() - 60_000);
      expect(s.duration_ms).toBeGreaterThanOrEqual(0);
    }
  });

  it("adds middleware hook calls that take at least middleware_span_min_ms, named <middleware>.<hook>", async () => {
    const spans = await spansOfOneTurn({ middleware_span_min_ms: 20 });
    const hooks = spans.filter((s) => s.kind === "middleware");
    expect(hooks.map((s) => s.name)).toEqual(["span-test-tools/SlowHook.beforeModel", "span-test-tools/SlowHook.beforeModel"]);
    for (const s of hooks) expect(s.duration_ms).toBeGreaterThanOrEqual(25);
  });

  it("emits nothing with timeline: false", async () => {
    expect(await spansOfOneTurn({ timeline: false })).toEqual([]);
  });
});
