import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { type ScriptedStep, scriptedModelsPlugin } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AntlerClient } from "../src/client/client.js";
import type { StreamEvent } from "../src/client/events.js";
import { INTERNAL_PRINCIPAL } from "../src/index.js";
import { tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

const weatherTools = definePlugin({
  name: "weather-tools",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(
      defineTool({
        name: "get_weather",
        description: "Weather for a city.",
        schema: z.object({ city: z.string() }),
        run: ({ city }) => `${city}: 21°C, clear`,
      }),
    );
    ctx.tools.add(
      defineTool({
        name: "get_forecast",
        description: "Forecast for a city.",
        schema: z.object({ city: z.string() }),
        run: () => {
          throw new Error("forecast service unavailable");
        },
      }),
    );
  },
});

async function client(steps: ScriptedStep[], extra: Record<string, unknown> = {}) {
  const scripted = scriptedModelsPlugin({ m: steps });
  const c = await AntlerClient.create({
    config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false }, ...extra },
    plugins: [scripted, weatherTools],
    cwd: tempDir(),
    env: {},
    discover: false,
  });
  clients.push(c);
  return { c, model: scripted.models };
}

async function collect(stream: AsyncIterable<StreamEvent>) {
  const events: StreamEvent[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

describe("AntlerClient.stream", () => {
  it("golden sequence: two tool calls, one throws; deltas per id, each call and result once, usage once per id", async () => {
    const { c } = await client([
      {
        id: "ai-1",
        text: "Checking both.",
        toolCalls: [
          { name: "get_weather", args: { city: "Oslo" }, id: "call-w" },
          { name: "get_forecast", args: { city: "Oslo" }, id: "call-f" },
        ],
        usage: { input_tokens: 10, output_tokens: 5 },
      },
      { id: "ai-2", text: "Oslo is 21°C and clear; the forecast is unavailable.", usage: { input_tokens: 30, output_tokens: 12 } },
    ]);
    const events = await collect(c.stream("Weather in Oslo?", { threadId: "golden" }));
    const shape = events
      .filter((e) => e.type !== "values")
      .map((e) => {
        if (e.type === "messages-tuple") {
          const d = e.data;
          if (d.type === "tool") return `tool ${d.tool_call_id} ${d.status}: ${d.content}`;
          if ("tool_calls" in d) return `ai ${d.id} calls ${d.tool_calls.map((t) => t.name).join(",")}`;
          return `ai ${d.id} +${JSON.stringify(d.content)}`;
        }
        if (e.type === "end") return `end ${JSON.stringify(e.data.usage)}`;
        return e.type;
      });
    // Text deltas concatenate to each message's text; order of the other events is fixed.
    const text = (id: string) =>
      events
        .filter((e) => e.type === "messages-tuple" && e.data.type === "ai" && e.data.id === id && !("tool_calls" in e.data))
        .map((e) => (e.data as { content: string }).content)
        .join("");
    expect(text("ai-1")).toBe("Checking both.");
    expect(text("ai-2")).toBe("Oslo is 21°C and clear; the forecast is unavailable.");
    expect(shape.filter((s) => !s.includes(" +"))).toEqual([
      "ai ai-1 calls get_weather,get_forecast",
      "tool call-w success: Oslo: 21°C, clear",
      "tool call-f error: Error: get_forecast failed: forecast service unavailable",
      `end ${JSON.stringify({ input_tokens: 40, output_tokens: 17, total_tokens: 57 })}`,
    ]);
    expect(shape.at(-1)).toMatch(/^end /);
    const values = events.filter((e) => e.type === "values");
    expect(values.length).toBeGreaterThan(1);
    for (const v of values) expect(v.data).toHaveProperty("summary_text", null);
    const end = events.at(-1);
    expect(end).toMatchObject({ type: "end", data: { thread_id: "golden", trace_id: expect.stringMatching(/^[0-9a-f]{32}$/) } });
  });

  it("chat returns the final AI text, and a second turn on the thread sees the first", async () => {
    const { c, model } = await client([
      { id: "a1", text: "Hello!" },
      { id: "a2", text: "You said hi before." },
    ]);
    expect(await c.chat("hi", { threadId: "t" })).toBe("Hello!");
    expect(await c.chat("what did I say?", { threadId: "t" })).toBe("You said hi before.");
    const second = model.get("m")?.calls[1]?.messages.map((m) => m.getType());
    expect(second).toEqual(["system", "human", "ai", "human"]);
  });

  it("counts usage only for this run's messages", async () => {
    const { c } = await client([
      { id: "a1", text: "one", usage: { input_tokens: 5, output_tokens: 1 } },
      { id: "a2", text: "two", usage: { input_tokens: 7, output_tokens: 2 } },
    ]);
    await collect(c.stream("1", { threadId: "u" }));
    const events = await collect(c.stream("2", { threadId: "u" }));
    expect(events.at(-1)).toMatchObject({ type: "end", data: { usage: { input_tokens: 7, output_tokens: 2, total_tokens: 9 } } });
  });

  it("streams only this run's messages: an earlier turn's tool calls and text are never sent again", async () => {
    const { c } = await client([
      { id: "a1", toolCalls: [{ id: "call-1", name: "get_weather", args: { city: "Oslo" } }] },
      { id: "a2", text: "Oslo is clear." },
      { id: "a3", text: "Still clear." },
    ]);
    await collect(c.stream("weather?", { threadId: "h" }));
    const events = await collect(c.stream("and now?", { threadId: "h" }));
    const sent = events.filter((e) => e.type === "messages-tuple").map((e) => e.data as { id: string; content: string });
    expect(sent.map((d) => d.id)).toEqual(["a3", "a3"]);
    expect(sent.map((d) => d.content).join("")).toBe("Still clear.");
  });

  it("keeps a caller's trace id and replaces a forged one in the context", async () => {
    const { c } = await client([{ id: "a1", text: "ok" }]);
    const events = await collect(
      c.stream("hi", { threadId: "tr", traceId: "caller-trace", context: { antler_trace_id: "forged", non_interactive: true } }),
    );
    expect(events.at(-1)).toMatchObject({ data: { trace_id: "caller-trace" } });
  });

  it("leaves ask_clarification out of non-interactive runs, and only the internal principal can ask for that", async () => {
    const { c, model } = await client([
      { id: "a1", text: "ok" },
      { id: "a2", text: "ok" },
      { id: "a3", text: "ok" },
    ]);
    await c.chat("hi", { threadId: "n1" });
    await c.chat("hi", { threadId: "n2", context: { non_interactive: true } });
    await c.chat("hi", { threadId: "n3", context: { non_interactive: true }, principal: INTERNAL_PRINCIPAL });
    const tools = model.get("m")?.calls.map((call) => call.tools.includes("ask_clarification"));
    expect(tools).toEqual([true, true, false]);
  });

  it("lists and reads threads per user; another user's thread is not found", async () => {
    const { c } = await client([{ id: "a1", text: "Hi Ann" }]);
    await c.chat("hello", { threadId: "ann-thread", userId: "ann" });
    expect((await c.listThreads({ userId: "ann" })).map((t) => t.thread_id)).toEqual(["ann-thread"]);
    expect(await c.listThreads({ userId: "bob" })).toEqual([]);
    const details = await c.getThread("ann-thread", { userId: "ann" });
    expect(details.messages.map((m) => m.content)).toEqual(["hello", "Hi Ann"]);
    await expect(c.getThread("ann-thread", { userId: "bob" })).rejects.toMatchObject({ code: "ANTLER_ERR_THREAD_NOT_FOUND" });
  });

  it("uploads a local file (directories rejected) and tells the model about it on the next turn", async () => {
    const { c, model } = await client([{ id: "a1", text: "Got it." }]);
    const dir = tempDir();
    const file = join(dir, "notes.txt");
    writeFileSync(file, "remember the milk");
    mkdirSync(join(dir, "folder"));
    await expect(c.uploadFile("up", join(dir, "folder"))).rejects.toMatchObject({ code: "ANTLER_ERR_UPLOAD_INVALID" });
    const record = await c.uploadFile("up", file);
    expect(record.virtual_path).toBe("/mnt/user-data/uploads/notes.txt");
    await c.chat("see my upload", { threadId: "up" });
    const last = model.get("m")?.calls[0]?.messages.at(-1);
    expect(String(last?.content)).toContain("/mnt/user-data/uploads/notes.txt");
  });

  it("cancels a run mid model call when the consumer stops iterating, and the next run on the thread works", async () => {
    let entered: () => void = () => {};
    const modelEntered = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const scripted = scriptedModelsPlugin({
      m: (messages) => {
        const last = String(messages.at(-1)?.content);
        if (last === "slow one") {
          entered();
          return { text: "never finished", delayMs: 30_000 };
        }
        return { text: "back" };
      },
    });
    const c = await AntlerClient.create({
      config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
      plugins: [scripted],
      cwd: tempDir(),
      env: {},
      discover: false,
    });
    clients.push(c);
    const stream = c.stream("slow one", { threadId: "cx" });
    const pending = stream.next();
    await modelEntered;
    await pending;
    const started = Date.now();
    await stream.return(undefined);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await c.chat("again", { threadId: "cx" })).toBe("back");
    const thread = await c.getThread("cx");
    expect(thread.messages.map((m) => m.content)).not.toContain("never finished");
  });
});

describe("caller metadata", () => {
  it("reaches LangChain as one caller_metadata key, never spread into the callback metadata", async () => {
    let seen: Record<string, unknown> | undefined;
    const probe = definePlugin({
      name: "metadata-probe",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.tools.add(
          defineTool({
            name: "probe",
            description: "Reads the run's callback metadata.",
            schema: z.object({}),
            run: (_args, runtime) => {
              seen = (runtime as { metadata?: Record<string, unknown>; config?: { metadata?: Record<string, unknown> } }).config?.metadata;
              return "ok";
            },
          }),
        );
      },
    });
    const scripted = scriptedModelsPlugin({ m: [{ toolCalls: [{ name: "probe", args: {} }] }, { text: "done" }] });
    const c = await AntlerClient.create({
      config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
      plugins: [scripted, probe],
      cwd: tempDir(),
      env: {},
      discover: false,
    });
    clients.push(c);
    await c.invoke("hi", { threadId: "meta", metadata: { team: "a", priority: 2 } });
    expect(seen?.caller_metadata).toEqual({ team: "a", priority: 2 });
    expect(seen).not.toHaveProperty("team");
    expect(seen).not.toHaveProperty("priority");
  });
});

describe("agent reuse", () => {
  it("rebuilds the agent when a tool keeps its name but changes its schema (an MCP server's new version)", async () => {
    let version: 1 | 2 = 1;
    const v1 = defineTool({
      name: "lookup",
      description: "Looks a thing up by number.",
      schema: z.object({ id: z.number() }),
      run: ({ id }) => `v1 found ${id}`,
    });
    const v2 = defineTool({
      name: "lookup",
      description: "Looks a thing up by name.",
      schema: z.object({ name: z.string() }),
      run: ({ name }) => `v2 found ${name}`,
    });
    const changing = definePlugin({
      name: "changing-tools",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.tools.add(async () => (version === 1 ? v1 : v2));
      },
    });
    const scripted = scriptedModelsPlugin({
      m: [
        { toolCalls: [{ name: "lookup", args: { id: 7 } }] },
        { text: "first" },
        { toolCalls: [{ name: "lookup", args: { name: "seven" } }] },
        { text: "second" },
      ],
    });
    const c = await AntlerClient.create({
      config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
      plugins: [scripted, changing],
      cwd: tempDir(),
      env: {},
      discover: false,
    });
    clients.push(c);
    const toolResults = async (threadId: string) =>
      (await c.getThread(threadId)).messages.filter((m) => m.type === "tool").map((m) => m.content);
    await c.invoke("one", { threadId: "a" });
    expect(await toolResults("a")).toEqual(["v1 found 7"]);
    version = 2;
    await c.invoke("two", { threadId: "b" });
    // An agent reused from the first build would validate against { id: number } and refuse the call.
    expect(await toolResults("b")).toEqual(["v2 found seven"]);
  });
});
