import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin, ErrorCodes, ensureTraceContext, isAntlerError, type Kernel } from "@antler/kernel";
import { createTestKernel, type Script, ScriptedChatModel } from "@antler/kernel/testing";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type AIMessageChunk, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { CassetteErrorCodes } from "../src/errors.js";
import {
  CassetteChatModel,
  type CassetteExchange,
  createScrubber,
  loadCassette,
  normalizeRequest,
  recordCassetteFromScript,
  writeCassette,
} from "../src/index.js";
import { tempDir } from "./fixtures.js";

const weather = tool(async ({ city }: { city: string }) => `sunny in ${city}`, {
  name: "get_weather",
  description: "Current weather for a city.",
  schema: z.object({ city: z.string() }),
});

const weatherScript: Script = [
  { text: "Let me check.", toolCalls: [{ name: "get_weather", args: { city: "Oslo" } }], usage: { input_tokens: 20, output_tokens: 5 } },
  { text: "It is sunny in Oslo.", usage: { input_tokens: 40, output_tokens: 6 } },
];

async function runWeatherAgent(model: BaseChatModel, question = "Weather in Oslo?"): Promise<string> {
  const agent = createAgent({ model, tools: [weather], systemPrompt: "You answer weather questions." });
  const result = await agent.invoke({ messages: [new HumanMessage(question)] });
  return result.messages.at(-1)?.text ?? "";
}

function exchange(messages: Array<HumanMessage | SystemMessage>, text: string): CassetteExchange {
  return { request: normalizeRequest(messages, [], createScrubber()), response: { content: text, tool_calls: [] } };
}

const kernels: Kernel[] = [];
afterEach(async () => {
  await Promise.all(kernels.splice(0).map((k) => k.close()));
});

/** A provider `scripted-test` so a cassette can record from a configured model by name. */
function scriptedProviderPlugin(script: Script) {
  const model = new ScriptedChatModel(script);
  const plugin = definePlugin({
    name: "cassette-test-scripted",
    version: "0.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.models.addProvider({ id: "scripted-test", create: () => model });
    },
  });
  return { plugin, model };
}

describe("request normalization", () => {
  it("keeps roles, text, tool calls, tool_call_id and sorted tool names, and ignores message ids", () => {
    const scrub = createScrubber();
    const messages = [
      new SystemMessage({ content: "Be brief.", id: "sys-1" }),
      new HumanMessage({ content: "Weather?", id: "h-1" }),
      new AIMessage({ content: "", id: "ai-1", tool_calls: [{ name: "get_weather", args: { city: "Oslo" }, id: "call_7" }] }),
      new ToolMessage({ content: "sunny", tool_call_id: "call_7", id: "t-1" }),
    ];
    const request = normalizeRequest(messages, [weather, { type: "function", function: { name: "alpha", parameters: {} } }], scrub);
    expect(request).toEqual({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather?" },
        { role: "assistant", content: "", tool_calls: [{ name: "get_weather", args: { city: "Oslo" }, id: "call_7" }] },
        { role: "tool", content: "sunny", tool_call_id: "call_7" },
      ],
      tools: ["alpha", "get_weather"],
    });
  });

  it("replaces ids, timestamps and machine folders with placeholders", () => {
    const scrub = createScrubber({ baseDir: "/srv/app/.antler", configDir: "/srv/app", tmpDir: "/var/tmp" });
    const text =
      "run 0123456789abcdef0123456789abcdef at 2025-03-04T05:06:07.891Z, thread 123e4567-e89b-12d3-a456-426614174000, " +
      "files /srv/app/.antler/threads/x and /srv/app/config.yaml, scratch /var/tmp/job1, not /var/tmpfoo";
    expect(scrub(text)).toBe(
      "run <id> at <time>, thread <id>, files <base_dir>/threads/x and <config_dir>/config.yaml, scratch <tmp>/job1, not /var/tmpfoo",
    );
  });
});

describe("cassette replay", () => {
  it("replays a session recorded from a script inside createAgent, tool round trip included", async () => {
    const path = join(tempDir(), "cassettes", "weather.jsonl");
    const recorded = await recordCassetteFromScript({ path, script: weatherScript, run: (model) => runWeatherAgent(model) });
    expect(recorded.exchanges).toHaveLength(2);
    expect(recorded.exchanges[0]?.request.tools).toEqual(["get_weather"]);
    expect(recorded.scripted.calls[0]?.tools).toEqual(["get_weather"]);

    const replay = new CassetteChatModel({ cassette: await loadCassette(path) });
    expect(await runWeatherAgent(replay)).toBe("It is sunny in Oslo.");
    expect(replay.unplayed).toEqual([]);
  });

  it("writes a header line, then one readable JSON object per exchange", async () => {
    const path = join(tempDir(), "c.jsonl");
    const { scripted } = await recordCassetteFromScript({
      path,
      script: weatherScript,
      run: (model) => runWeatherAgent(model),
      note: "demo",
    });
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    const header = JSON.parse(lines[0] as string);
    expect(header).toMatchObject({ antler_cassette: 1, recorded_from: "scripted", note: "demo" });
    expect(Number.isNaN(Date.parse(header.recorded_at))).toBe(false);
    const first = JSON.parse(lines[1] as string);
    expect(first.response).toMatchObject({
      id: `${scripted.idPrefix}-0`,
      content: "Let me check.",
      tool_calls: [{ name: "get_weather", args: { city: "Oslo" }, id: "call_0_0" }],
      usage_metadata: { input_tokens: 20, output_tokens: 5, total_tokens: 25 },
    });
    expect(first.request.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
  });

  it("records the aggregated reply when the recorder is streamed", async () => {
    const path = join(tempDir(), "streamed.jsonl");
    const { exchanges } = await recordCassetteFromScript({
      path,
      script: weatherScript,
      run: async (model) => {
        const agent = createAgent({ model, tools: [weather] });
        for await (const _ of await agent.stream({ messages: [new HumanMessage("Weather in Oslo?")] }, { streamMode: "messages" })) {
          // draining the stream is the point
        }
      },
    });
    expect(exchanges.map((e) => e.response.content)).toEqual(["Let me check.", "It is sunny in Oslo."]);
    expect(exchanges[0]?.response.tool_calls).toEqual([{ name: "get_weather", args: { city: "Oslo" }, id: "call_0_0" }]);
    expect(exchanges[1]?.response.usage_metadata).toMatchObject({ input_tokens: 40, output_tokens: 6 });
  });

  it("streams replayed answers as word deltas under one id with usage on the last chunk", async () => {
    const path = join(tempDir(), "s.jsonl");
    const { scripted } = await recordCassetteFromScript({ path, script: weatherScript, run: (model) => runWeatherAgent(model) });
    const replay = new CassetteChatModel({ cassette: await loadCassette(path) });
    const agent = createAgent({ model: replay, tools: [weather], systemPrompt: "You answer weather questions." });
    const chunks: AIMessageChunk[] = [];
    for await (const [chunk, meta] of await agent.stream(
      { messages: [new HumanMessage("Weather in Oslo?")] },
      { streamMode: "messages" },
    )) {
      if (meta.langgraph_node === "model_request") chunks.push(chunk as AIMessageChunk);
    }
    const final = chunks.filter((c) => c.id === `${scripted.idPrefix}-1`);
    expect(final.filter((c) => c.text).map((c) => c.text)).toEqual(["It ", "is ", "sunny ", "in ", "Oslo."]);
    expect(final.at(-1)?.usage_metadata).toMatchObject({ input_tokens: 40, output_tokens: 6 });
    expect(final.slice(0, -1).every((c) => c.usage_metadata === undefined)).toBe(true);
  });

  it("matches a request recorded on another machine: folders, ids and times are normalized", async () => {
    const dirA = { baseDir: "/home/alice/proj/.antler", configDir: "/home/alice/proj", tmpDir: "/tmp" };
    const dirB = { baseDir: "/Users/bob/work/.antler", configDir: "/Users/bob/work", tmpDir: "/var/folders/zz/T" };
    const prompt = (d: typeof dirA, id: string, time: string) =>
      new SystemMessage(`Workspace ${d.configDir}/workspace, data ${d.baseDir}/threads, scratch ${d.tmpDir}/x. Run ${id} at ${time}.`);
    const path = join(tempDir(), "m.jsonl");
    const recorded = normalizeRequest(
      [prompt(dirA, "0123456789abcdef0123456789abcdef", "2024-01-01T00:00:00Z"), new HumanMessage("hi")],
      [],
      createScrubber(dirA),
    );
    await writeCassette(path, [{ request: recorded, response: { content: "hello from A", tool_calls: [] } }]);
    const replay = new CassetteChatModel({ cassette: await loadCassette(path), dirs: dirB });
    const reply = await replay.invoke([
      prompt(dirB, "fedcba9876543210fedcba9876543210", "2026-07-08T09:10:11.123+02:00"),
      new HumanMessage("hi"),
    ]);
    expect(reply.text).toBe("hello from A");
  });

  it("answers concurrent threads by request, whatever order they ask in", async () => {
    const path = join(tempDir(), "threads.jsonl");
    const alpha = [new SystemMessage("sys"), new HumanMessage("alpha?")];
    const beta = [new SystemMessage("sys"), new HumanMessage("beta?")];
    await writeCassette(path, [exchange(alpha, "answer alpha"), exchange(beta, "answer beta")]);
    const replay = new CassetteChatModel({ cassette: await loadCassette(path) });
    const [b, a] = await Promise.all([replay.invoke(beta), replay.invoke(alpha)]);
    expect([b.text, a.text]).toEqual(["answer beta", "answer alpha"]);
  });

  it("hands out repeated recordings of one request in order, then fails with CASSETTE_EXHAUSTED", async () => {
    const path = join(tempDir(), "dup.jsonl");
    const same = [new HumanMessage("again?")];
    await writeCassette(path, [exchange(same, "first"), exchange(same, "second")]);
    const replay = new CassetteChatModel({ cassette: await loadCassette(path) });
    expect((await replay.invoke(same)).text).toBe("first");
    expect((await replay.invoke(same)).text).toBe("second");
    const error = await replay.invoke(same).catch((e: unknown) => e);
    expect(isAntlerError(error, CassetteErrorCodes.CASSETTE_EXHAUSTED)).toBe(true);
    expect((error as Error).message).toContain("line 2, 3");
  });

  it("fails an unknown request with CASSETTE_MISMATCH: a diff against the closest recording, the trace id and the path", async () => {
    const path = join(tempDir(), "mismatch.jsonl");
    await writeCassette(path, [
      exchange([new SystemMessage("You are terse."), new HumanMessage("Unrelated")], "x"),
      exchange([new SystemMessage("You are terse."), new HumanMessage("What is 2+2?\nShow work.")], "4"),
    ]);
    const replay = new CassetteChatModel({ cassette: await loadCassette(path), where: "models[0]" });
    // Both recordings share the system message; the one with more lines in common is the diff base.
    const error = await ensureTraceContext("trace-mismatch-1", () =>
      replay.invoke([new SystemMessage("You are terse."), new HumanMessage("What is 3+3?\nShow work.")]),
    ).catch((e: unknown) => e);
    expect(isAntlerError(error, CassetteErrorCodes.CASSETTE_MISMATCH)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain("trace-mismatch-1");
    expect(message).toContain(path);
    expect(message).toMatch(/^@@ -\d+,\d+ \+\d+,\d+ @@$/m);
    expect(message).toContain("+    What is 3+3?");
    expect(message).toContain("     Show work.");
  });

  it("picks the recording sharing the most leading messages as the diff base", async () => {
    const path = join(tempDir(), "closest.jsonl");
    await writeCassette(path, [
      exchange([new SystemMessage("A"), new HumanMessage("one")], "x"),
      exchange([new SystemMessage("B"), new HumanMessage("two"), new HumanMessage("three")], "y"),
    ]);
    const replay = new CassetteChatModel({ cassette: await loadCassette(path) });
    const error = await replay.invoke([new SystemMessage("B"), new HumanMessage("two"), new HumanMessage("four")]).catch((e: unknown) => e);
    const message = (error as Error).message;
    expect(message).toContain(`${path}:3`);
    expect(message).toContain("-    three");
    expect(message).toContain("+    four");
  });
});

describe("cassette files", () => {
  it("rejects a file without a header, naming the line", async () => {
    const path = join(tempDir(), "bad.jsonl");
    writeFileSync(path, '{"request":{},"response":{}}\n');
    await expect(loadCassette(path)).rejects.toThrow(`${path}:1`);
  });

  it("rejects a malformed exchange line, naming its line number", async () => {
    const path = join(tempDir(), "bad2.jsonl");
    writeFileSync(path, '{"antler_cassette":1}\n\n{"request":{"messages":[],"tools":[]}}\n');
    await expect(loadCassette(path)).rejects.toThrow(`${path}:3`);
  });
});

describe("provider `cassette` in a kernel", () => {
  it("records through bindTools from a configured model, then replays from the same config folder", async () => {
    const dir = tempDir();
    const { plugin, model: real } = scriptedProviderPlugin(weatherScript);
    const recording = await createTestKernel({
      builtins: true,
      cwd: dir,
      plugins: [plugin],
      config: {
        models: [
          { name: "real", provider: "scripted-test" },
          { name: "rec", provider: "cassette", options: { path: "cassettes/w.jsonl", mode: "record", record_from: "real" } },
        ],
      },
    });
    kernels.push(recording);
    expect(await runWeatherAgent(await recording.createModel("rec"))).toBe("It is sunny in Oslo.");
    expect(real.calls.map((c) => c.tools)).toEqual([["get_weather"], ["get_weather"]]);
    const file = await loadCassette(join(dir, "cassettes", "w.jsonl"));
    expect(file.header.recorded_from).toBe("real");
    expect(file.exchanges).toHaveLength(2);

    const replaying = await createTestKernel({
      builtins: true,
      cwd: dir,
      config: { models: [{ name: "rec", provider: "cassette", options: { path: "cassettes/w.jsonl" } }] },
    });
    kernels.push(replaying);
    expect(await runWeatherAgent(await replaying.createModel())).toBe("It is sunny in Oslo.");
  });

  it.each([
    [{ mode: "record" }, ["models[0].options.path: is required", "models[0].options.record_from"]],
    [{ path: "c.jsonl", mode: "tape" }, ["models[0].options.mode"]],
    [{ path: "c.jsonl", bogus: true }, ["models[0].options.bogus: unknown key"]],
  ])("rejects bad options %j with their config paths", async (options, expected) => {
    const kernel = await createTestKernel({
      builtins: true,
      cwd: tempDir(),
      config: { models: [{ name: "c", provider: "cassette", options }] },
    });
    kernels.push(kernel);
    const error = await kernel.createModel("c").catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.CONFIG_INVALID)).toBe(true);
    for (const text of expected) expect((error as Error).message).toContain(text);
  });

  it("explains a missing cassette file with its path and how to record it", async () => {
    const dir = tempDir();
    const kernel = await createTestKernel({
      builtins: true,
      cwd: dir,
      config: { models: [{ name: "c", provider: "cassette", options: { path: "nope.jsonl" } }] },
    });
    kernels.push(kernel);
    const error = await kernel.createModel("c").catch((e: unknown) => e);
    expect((error as Error).message).toContain(join(dir, "nope.jsonl"));
    expect((error as Error).message).toContain("mode: record");
  });

  it("refuses to record from itself", async () => {
    const kernel = await createTestKernel({
      builtins: true,
      cwd: tmpdir(),
      config: { models: [{ name: "c", provider: "cassette", options: { path: "x.jsonl", mode: "record", record_from: "c" } }] },
    });
    kernels.push(kernel);
    await expect(kernel.createModel("c")).rejects.toThrow("models[0].options.record_from");
  });
});
