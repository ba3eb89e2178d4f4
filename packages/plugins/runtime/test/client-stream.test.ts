import { definePlugin, getCurrentTraceId } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { type ScriptedStep, scriptedModelsPlugin } from "@antler/kernel/testing";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AntlerClient } from "../src/client/client.js";
import type { MessagesTupleEvent, StreamEvent } from "../src/client/events.js";
import { tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

/**
 * `trace_probe` answers with the trace id it runs under; `chart` returns content and a native artifact.
 * A middleware factory counts agent builds: the kernel assembles middleware once per lead-agent build.
 */
function probePlugin(counts: { builds: number }) {
  return definePlugin({
    name: "probe",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.tools.add(
        defineTool({
          name: "trace_probe",
          description: "Reports the ambient trace id.",
          schema: z.object({}),
          run: () => `trace=${getCurrentTraceId() ?? "none"}`,
        }),
      );
      ctx.tools.add(
        tool(() => ["chart drawn", { points: [1, 2, 3], kind: "line" }], {
          name: "chart",
          description: "Draws a chart.",
          schema: z.object({}),
          responseFormat: "content_and_artifact",
        }),
      );
      ctx.middleware.add({
        name: "BuildCounter",
        create: () => {
          counts.builds++;
          return { name: "BuildCounter" };
        },
      });
    },
  });
}

async function client(script: ScriptedStep[] | ((callIndex: number) => ScriptedStep), extraModels: string[] = []) {
  const counts = { builds: 0 };
  const respond = typeof script === "function" ? { respond: (_m: unknown, i: number) => script(i) } : script;
  const scripted = scriptedModelsPlugin(Object.fromEntries(["m", ...extraModels].map((name) => [name, respond])));
  const c = await AntlerClient.create({
    config: {
      models: ["m", ...extraModels].map((name) => ({ name, provider: "scripted" })),
      storage: { backend: "memory" },
      title: { enabled: false },
    },
    plugins: [scripted, probePlugin(counts)],
    cwd: tempDir(),
    env: {},
    discover: false,
  });
  clients.push(c);
  return { c, counts };
}

function toolResult(events: StreamEvent[], name: string) {
  return events.find(
    (e): e is MessagesTupleEvent => e.type === "messages-tuple" && e.data.type === "tool" && "name" in e.data && e.data.name === name,
  )?.data as Extract<MessagesTupleEvent["data"], { type: "tool" }> | undefined;
}

describe("AntlerClient.stream trace binding", () => {
  it("runs each step under the run's trace id, while the consumer's code between events sees none", async () => {
    const { c } = await client([{ toolCalls: [{ name: "trace_probe", args: {}, id: "p1" }] }, { text: "done" }]);
    expect(getCurrentTraceId()).toBeNull();
    const seenByConsumer: Array<string | null> = [];
    const events: StreamEvent[] = [];
    for await (const event of c.stream("probe", { threadId: "trace-1" })) {
      events.push(event);
      seenByConsumer.push(getCurrentTraceId());
      await Promise.resolve();
      seenByConsumer.push(getCurrentTraceId());
      await new Promise((r) => setImmediate(r));
      seenByConsumer.push(getCurrentTraceId());
    }
    const end = events.at(-1);
    expect(end?.type).toBe("end");
    const traceId = end?.type === "end" ? end.data.trace_id : undefined;
    expect(traceId).toMatch(/\S/);
    expect(toolResult(events, "trace_probe")?.content).toBe(`trace=${traceId}`);
    expect(seenByConsumer.length).toBeGreaterThan(6);
    expect(new Set(seenByConsumer)).toEqual(new Set([null]));
  });
});

describe("AntlerClient.stream tool artifacts", () => {
  it("keeps a tool's native artifact on its streamed tool message and in the values messages", async () => {
    const { c } = await client([{ toolCalls: [{ name: "chart", args: {}, id: "chart-1" }] }, { text: "Here is the chart." }]);
    const events: StreamEvent[] = [];
    for await (const event of c.stream("draw", { threadId: "art-1" })) events.push(event);
    const streamed = toolResult(events, "chart");
    expect(streamed?.content).toBe("chart drawn");
    expect(streamed?.artifact).toEqual({ points: [1, 2, 3], kind: "line" });
    const lastValues = events.filter((e) => e.type === "values").at(-1);
    const inValues = lastValues?.type === "values" ? lastValues.data.messages.find((m) => m.tool_call_id === "chart-1") : undefined;
    expect(inValues?.artifact).toEqual({ points: [1, 2, 3], kind: "line" });
  });
});

describe("AntlerClient agent cache", () => {
  const answer = () => ({ text: "ok" });

  it("builds one agent per user and reuses it for that user's later runs", async () => {
    const { c, counts } = await client(answer);
    await c.chat("one", { threadId: "a1", userId: "alice" });
    await c.chat("two", { threadId: "a2", userId: "alice" });
    expect(counts.builds).toBe(1);
    await c.chat("three", { threadId: "b1", userId: "bob" });
    expect(counts.builds).toBe(2);
    await c.chat("four", { threadId: "b2", userId: "bob" });
    expect(counts.builds).toBe(2);
  });

  it("builds a separate agent per model and per tool set", async () => {
    const { c, counts } = await client(answer, ["m2"]);
    await c.chat("one", { threadId: "t1" });
    await c.chat("other model", { threadId: "t2", model: "m2" });
    expect(counts.builds).toBe(2);
    // A custom agent gets update_agent: another tool set, another agent.
    await c.saveAgent("helper", { soul: "You help." });
    await c.chat("custom agent", { threadId: "t3", agent: "helper" });
    expect(counts.builds).toBe(3);
    await c.chat("again", { threadId: "t4" });
    expect(counts.builds).toBe(3);
  });

  it("resetAgent drops every cached agent, so the next run of each user builds again", async () => {
    const { c, counts } = await client(answer);
    await c.chat("one", { threadId: "a1", userId: "alice" });
    await c.chat("one", { threadId: "b1", userId: "bob" });
    expect(counts.builds).toBe(2);
    c.resetAgent();
    await c.chat("two", { threadId: "a1", userId: "alice" });
    await c.chat("two", { threadId: "b1", userId: "bob" });
    expect(counts.builds).toBe(4);
    await c.chat("three", { threadId: "a1", userId: "alice" });
    expect(counts.builds).toBe(4);
  });
});
