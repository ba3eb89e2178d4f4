// The authoring helpers inside real turns (AntlerClient on a scripted model): a defineTool tool's events reach the
// client's stream with no config passed, hookContext takes a tool's runtime, and runIds gives the same ids to a
// tool, a node hook and a wrap hook.
import { createToken, definePlugin, emitCustomEvent } from "@antler/kernel";
import { defineTool, hookContext, type RunIds, runIds } from "@antler/kernel/authoring";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AntlerClient } from "../src/client/client.js";
import type { StreamEvent } from "../src/client/events.js";
import { tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

const Calls = createToken<{ n: number }>("test.authoring-in-runs.calls");

/** What the plugin's tool and hooks saw, by where they ran. */
interface Seen {
  tool?: RunIds & { turn: number; hookRunId: string | undefined; calls: number };
  beforeAgent?: RunIds;
  wrapToolCall?: RunIds;
}

function authoringPlugin(seen: Seen) {
  return definePlugin({
    name: "authoring-probe",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.provide(Calls, { lifetime: "run", useFactory: () => ({ n: 0 }) });
      ctx.tools.add(
        defineTool({
          name: "count_up",
          description: "Counts to the given number, reporting each step.",
          schema: z.object({ to: z.number().int() }),
          async run({ to }, runtime) {
            for (let step = 1; step <= to; step++) await emitCustomEvent({ type: "acme.progress", step, of: to });
            const hook = hookContext({ state: runtime.state, runtime });
            const calls = hook.resolve(Calls);
            calls.n += 1;
            seen.tool = { ...runIds(runtime), turn: hook.turnNumber, hookRunId: hook.runId, calls: calls.n };
            return `counted to ${to}`;
          },
        }),
      );
      ctx.middleware.add({
        name: "ids",
        beforeAgent(_state, runtime) {
          seen.beforeAgent = runIds(runtime);
        },
        wrapToolCall(request, handler) {
          seen.wrapToolCall = runIds(request.runtime);
          return handler(request);
        },
      });
    },
  });
}

async function runTurn(seen: Seen): Promise<StreamEvent[]> {
  const models = scriptedModelsPlugin({
    m: [{ toolCalls: [{ id: "count-1", name: "count_up", args: { to: 2 } }] }, { text: "Counted." }],
  });
  const client = await AntlerClient.create({
    config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
    plugins: [models, authoringPlugin(seen)],
    cwd: tempDir(),
    env: {},
    discover: false,
  });
  clients.push(client);
  const events: StreamEvent[] = [];
  for await (const event of client.stream("Count to 2", { threadId: "t1", userId: "ada" })) events.push(event);
  return events;
}

describe("authoring helpers in a real turn", () => {
  it("delivers emitCustomEvent(payload) from a defineTool tool to the client's stream without the tool passing its config", async () => {
    const events = await runTurn({});
    const progress = events.filter((e) => e.type === "custom" && e.data.type === "acme.progress").map((e) => e.data);
    expect(progress).toEqual([
      { type: "acme.progress", step: 1, of: 2 },
      { type: "acme.progress", step: 2, of: 2 },
    ]);
  });

  it("gives a tool hookContext({ state: runtime.state, runtime }) with the run's id, turn and run-scoped services", async () => {
    const seen: Seen = {};
    const events = await runTurn(seen);
    const end = events.at(-1);
    expect(end?.type).toBe("end");
    const runId = end?.type === "end" ? end.data.run_id : undefined;
    expect(seen.tool).toMatchObject({ turn: 1, hookRunId: runId, calls: 1 });
  });

  it("gives a tool, a node hook and a wrap hook the same run ids from runIds: the thread as given, the user, the run and its trace", async () => {
    const seen: Seen = {};
    const events = await runTurn(seen);
    const end = events.at(-1);
    if (end?.type !== "end") throw new Error("the stream did not end with an end event");
    const expected = { threadId: "t1", userId: "ada", runId: end.data.run_id, traceId: end.data.trace_id };
    expect(expected.runId).toMatch(/\S/);
    expect(seen.beforeAgent).toEqual(expected);
    expect(seen.wrapToolCall).toEqual(expected);
    expect(seen.tool).toMatchObject(expected);
  });
});
