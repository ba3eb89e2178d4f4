import diagnosticsChannel from "node:diagnostics_channel";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { composeChain, DEFAULT_CHAIN, ensureTraceContext, type MiddlewareEntry, type MiddlewareSpec, threadPaths } from "@antler/kernel";
import { loadAuthoring } from "@antler/kernel/authoring";
import { MIDDLEWARE_SPAN_CHANNEL, type MiddlewareSpan } from "@antler/kernel/pipeline";
import { ScriptedChatModel } from "@antler/kernel/testing";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, fakeModel } from "langchain";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createAntlerAgent } from "../src/index.js";
import { patchDanglingToolCalls } from "../src/middleware/dangling-tool-call.js";
import { llmErrorHandlingMiddleware, toolErrorHandlingMiddleware } from "../src/middleware/error-handling.js";
import { loopDetectionMiddleware } from "../src/middleware/loop-detection.js";
import { compileThreadPipeline } from "../src/state.js";
import { tempDir } from "./fixtures.js";

// These tests hand tools to LangChain with no kernel started, so they load LangChain for the authoring helpers first.
beforeAll(() => loadAuthoring());

const builtin = (name: string, spec: Partial<MiddlewareSpec> = {}): MiddlewareEntry => ({
  name,
  plugin: "@antler/kernel",
  placement: {},
  spec: { name, ...spec },
});
const defaults = () => DEFAULT_CHAIN.map((n) => builtin(n));
const plugin = (
  name: string,
  placement: MiddlewareEntry["placement"] = {},
  spec: Partial<MiddlewareSpec> = {},
  owner = "acme",
): MiddlewareEntry => ({
  name: `${owner}/${name}`,
  plugin: owner,
  placement,
  spec: { name, ...spec },
});

function runAgent(chain: MiddlewareEntry[], model: ReturnType<typeof fakeModel>, tools: Parameters<typeof createAgent>[0]["tools"] = []) {
  const compiled = compileThreadPipeline(chain);
  const agent = createAgent({
    model,
    tools: [...(tools ?? []), ...compiled.tools],
    middleware: compiled.middleware,
    checkpointer: new MemorySaver(),
  });
  type Result = { messages: BaseMessage[] } & Record<string, unknown>;
  const invoke = (text: string, thread = "t1") =>
    agent.invoke(
      { messages: [new HumanMessage(text)] },
      { configurable: { thread_id: thread }, recursionLimit: 100 },
    ) as unknown as Promise<Result>;
  const state = (thread = "t1") =>
    (agent as unknown as { getState(c: unknown): Promise<{ values: Record<string, unknown> }> }).getState({
      configurable: { thread_id: thread },
    });
  return { compiled, agent, invoke, state };
}

describe("composing the chain", () => {
  it("places plugin middleware by stage: first is outermost, early after error handling, normal and late before Clarification", () => {
    const chain = composeChain(defaults(), [
      plugin("late-one", { stage: "late" }),
      plugin("normal-one"),
      plugin("early-one", { stage: "early" }),
      plugin("first-one", { stage: "first" }),
      plugin("early-two", { stage: "early" }),
    ]);
    const names = chain.map((e) => e.name);
    expect(names[0]).toBe("acme/first-one");
    expect(names.slice(names.indexOf("ToolErrorHandling") + 1, names.indexOf("ToolErrorHandling") + 3)).toEqual([
      "acme/early-one",
      "acme/early-two",
    ]);
    expect(names.slice(-3)).toEqual(["acme/normal-one", "acme/late-one", "Clarification"]);
  });

  it("places middleware before or after a named one, including another plugin's", () => {
    const chain = composeChain(defaults(), [
      plugin("b", { after: "acme/a" }),
      plugin("a", { before: "Title" }),
      plugin("c", { after: "Uploads" }),
    ]);
    const names = chain.map((e) => e.name);
    expect(names.indexOf("acme/b")).toBe(names.indexOf("acme/a") + 1);
    expect(names.indexOf("Title")).toBe(names.indexOf("acme/b") + 1);
    expect(names.indexOf("acme/c")).toBe(names.indexOf("Uploads") + 1);
  });

  it("replaces a built-in only with override: true, at its position, and anchors still find it", () => {
    expect(() => composeChain(defaults(), [plugin("my-title", { replace: "Title" })])).toThrow(/without override: true/);
    const chain = composeChain(defaults(), [
      plugin("my-title", { replace: "Title", override: true }),
      plugin("after-title", { after: "Title" }),
    ]);
    const names = chain.map((e) => e.name);
    expect(names).not.toContain("Title");
    expect(names.indexOf("acme/my-title")).toBe(DEFAULT_CHAIN.indexOf("Title"));
    expect(names.indexOf("acme/after-title")).toBe(names.indexOf("acme/my-title") + 1);
  });

  it("keeps Clarification last and refuses to place anything after it", () => {
    expect(() => composeChain(defaults(), [plugin("x", { after: "Clarification" })])).toThrow(/cannot be placed after Clarification/);
    expect(composeChain(defaults(), [plugin("x", { before: "Clarification" })]).at(-1)?.name).toBe("Clarification");
  });

  it("rejects an unknown anchor, naming what exists", () => {
    expect(() => composeChain(defaults(), [plugin("x", { after: "Sandbx" })])).toThrow(/anchored to "Sandbx".*Known: ThreadData/s);
  });

  it("asserts requires: a middleware placed before what it needs fails the build", () => {
    expect(() => composeChain(defaults(), [plugin("needs-data", { stage: "first" }, { requires: ["ThreadData"] })])).toThrow(
      /requires ThreadData to come before it/,
    );
  });

  it("is deterministic: the same contributions give the same order", () => {
    const make = () =>
      composeChain(defaults(), [plugin("a"), plugin("b", { stage: "early" }), plugin("c", { before: "Todo" })]).map((e) => e.name);
    expect(make()).toEqual(make());
  });
});

describe("compiling the pipeline", () => {
  it("compiles the whole chain into two LangChain middlewares: state and node hooks, then composed wrap hooks", () => {
    const chain = composeChain(
      [
        builtin("A", { beforeModel: () => undefined, wrapModelCall: (r, h) => h(r) }),
        builtin("B", { afterModel: () => undefined }),
        builtin("C", { wrapToolCall: (r, h) => h(r) }),
      ],
      [],
    );
    const { middleware } = compileThreadPipeline(chain);
    expect(middleware.map((m) => m.name)).toEqual(["AntlerPipeline", "AntlerPipelineWraps"]);
    // beforeModel/afterModel hooks that never jump run inside the model call: no graph node for them.
    expect(middleware[0]).toMatchObject({ beforeModel: undefined, afterModel: undefined });
    expect(middleware[1]).toMatchObject({
      wrapModelCall: expect.any(Function),
      wrapToolCall: expect.any(Function),
      stateSchema: undefined,
    });
  });

  it("runs before-hooks in chain order and after-hooks in reverse, each seeing earlier updates through the reducers", async () => {
    const seen: string[] = [];
    const spec = (name: string): Partial<MiddlewareSpec> => ({
      beforeModel: (state) => {
        seen.push(`before ${name} sees ${JSON.stringify(state.artifacts ?? [])}`);
        return { artifacts: [`${name}.md`, "shared.md"] };
      },
      afterModel: () => void seen.push(`after ${name}`),
    });
    const model = fakeModel().respond(new AIMessage({ content: "done", id: "m1" }));
    const { invoke, state: stateOf } = runAgent(
      [builtin("One", spec("one")), builtin("Two", spec("two")), builtin("Three", spec("three"))],
      model,
    );
    await invoke("hi");
    expect(seen).toEqual([
      "before one sees []",
      'before two sees ["one.md","shared.md"]',
      'before three sees ["one.md","shared.md","two.md"]',
      "after three",
      "after two",
      "after one",
    ]);
    const state = await stateOf();
    expect(state.values.artifacts).toEqual(["one.md", "shared.md", "two.md", "three.md"]);
  });

  it("keeps a graph node for afterModel hooks that may jump", () => {
    const chain = composeChain([builtin("Jumper", { afterModel: { canJumpTo: ["model"], hook: () => undefined } })], []);
    expect(compileThreadPipeline(chain).middleware[0]).toMatchObject({ afterModel: { canJumpTo: ["model"], hook: expect.any(Function) } });
  });

  it("keeps messages an inline beforeModel hook adds before the model's reply, and shows them to the model", async () => {
    const model = fakeModel().respond(new AIMessage({ content: "answer", id: "a1" }));
    let added = 0;
    const note = builtin("Note", {
      beforeModel: (state) => {
        if (state.messages.some((m) => m.id === "note")) return undefined;
        added++;
        return { messages: [new HumanMessage({ content: "(context note)", id: "note" })] };
      },
    });
    const { invoke } = runAgent([note], model);
    const result = await invoke("question");
    expect(added).toBe(1);
    expect(model.calls[0]?.messages.map((m) => String(m.content))).toEqual(["question", "(context note)"]);
    expect(result.messages.map((m) => `${m.getType()}:${m.content}`)).toEqual(["human:question", "human:(context note)", "ai:answer"]);
  });

  it("applies inline afterModel updates in the model's step, so routing sees them", async () => {
    const lookup = tool(() => "r", { name: "lookup", description: "looks up", schema: z.object({}) });
    const model = fakeModel().respondWithTools([{ name: "lookup", args: {}, id: "c1" }]);
    // Dropping the tool calls after the model means the run ends without calling the tool.
    const strip = builtin("Strip", {
      afterModel: (state) => {
        const last = state.messages.at(-1) as AIMessage;
        return { messages: [new AIMessage({ id: last.id, content: "no tools today" })], title: "stripped" };
      },
    });
    const { invoke } = runAgent([strip], model, [lookup]);
    const result = await invoke("go");
    expect(result.messages.map((m) => m.getType())).toEqual(["human", "ai"]);
    expect(result.messages.at(-1)?.content).toBe("no tools today");
    expect(result.title).toBe("stripped");
  });

  it("stops at the first jumpTo and ends the turn without calling the model", async () => {
    const calls: string[] = [];
    const model = fakeModel().respond(new AIMessage("never"));
    const { invoke } = runAgent(
      [
        builtin("Gate", { beforeModel: { canJumpTo: ["end"], hook: () => ({ jumpTo: "end", title: "gated" }) } }),
        builtin("Later", { beforeModel: () => void calls.push("later") }),
      ],
      model,
    );
    const result = await invoke("hi");
    expect(calls).toEqual([]);
    expect(model.callCount).toBe(0);
    expect(result.title).toBe("gated");
  });

  it("refuses a jump the hook did not declare", async () => {
    const { invoke } = runAgent([builtin("Rogue", { beforeModel: () => ({ jumpTo: "end" }) })], fakeModel().respond(new AIMessage("x")));
    await expect(invoke("hi")).rejects.toThrow(/jumped to "end" without declaring it/);
  });

  it("rejects one state key claimed by two middlewares with different schemas, naming both", () => {
    const chain = [
      builtin("One", { state: { shared: z.string().optional() } }),
      builtin("Two", { state: { shared: z.number().optional() } }),
    ];
    expect(() => compileThreadPipeline(chain)).toThrow(/"shared" is claimed by One and by Two/);
  });

  it("publishes one span per middleware hook, attributed to its middleware", async () => {
    const spans: MiddlewareSpan[] = [];
    const listen = (m: unknown) => void spans.push(m as MiddlewareSpan);
    diagnosticsChannel.subscribe(MIDDLEWARE_SPAN_CHANNEL, listen);
    try {
      const { invoke } = runAgent([builtin("Spanned", { beforeModel: () => undefined })], fakeModel().respond(new AIMessage("ok")));
      await ensureTraceContext("trace-span", () => invoke("hi"));
      expect(spans).toEqual([expect.objectContaining({ middleware: "Spanned", hook: "beforeModel", ok: true, traceId: "trace-span" })]);
    } finally {
      diagnosticsChannel.unsubscribe(MIDDLEWARE_SPAN_CHANNEL, listen);
    }
  });
});

describe("error handling middleware", () => {
  const boom = tool(
    () => {
      throw new Error("disk on fire");
    },
    { name: "boom", description: "always fails", schema: z.object({}) },
  );
  const add = tool(({ a, b }) => String(a + b), { name: "add", description: "adds", schema: z.object({ a: z.number(), b: z.number() }) });

  it("turns a thrown tool into an error ToolMessage with structured metadata, and the run goes on", async () => {
    const model = fakeModel()
      .respondWithTools([{ name: "boom", args: {}, id: "c1" }])
      .respond(new AIMessage("recovered"));
    const { invoke } = runAgent([builtin("ToolErrorHandling", toolErrorHandlingMiddleware())], model, [boom]);
    const result = await ensureTraceContext("trace-tool", () => invoke("go"));
    const failed = result.messages.find((m: unknown) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(failed.status).toBe("error");
    expect(failed.content).toBe("Error: boom failed: disk on fire");
    expect(failed.additional_kwargs.antler_tool_meta).toMatchObject({
      status: "error",
      recoverable_by_model: true,
      trace_id: "trace-tool",
    });
    expect(result.messages.at(-1)?.content).toBe("recovered");
  });

  it("reports invalid tool arguments as such", async () => {
    const model = fakeModel()
      .respondWithTools([{ name: "add", args: { a: "one", b: 2 }, id: "c1" }])
      .respond(new AIMessage("ok"));
    const { invoke } = runAgent([builtin("ToolErrorHandling", toolErrorHandlingMiddleware())], model, [add]);
    const result = await invoke("go");
    const failed = result.messages.find((m: unknown) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(failed.content).toMatch(/^Error: the arguments for add are invalid/);
    expect(failed.additional_kwargs.antler_tool_meta).toMatchObject({ error_type: "invalid_arguments" });
  });

  it("turns a model failure into an assistant message that carries the trace id", async () => {
    const model = fakeModel().alwaysThrow(new Error("429 Too Many Requests"));
    const { invoke } = runAgent([builtin("LLMErrorHandling", llmErrorHandlingMiddleware())], model);
    const result = await ensureTraceContext("trace-llm", () => invoke("go"));
    const last = result.messages.at(-1) as AIMessage;
    expect(last.content).toContain("429 Too Many Requests");
    expect(last.content).toContain("trace-llm");
    expect(last.additional_kwargs).toMatchObject({ antler_error_fallback: true, trace_id: "trace-llm" });
  });

  it("lets a scripted model's exhausted script fail the run instead of answering for it", async () => {
    const model = new ScriptedChatModel([{ text: "the only scripted answer" }]);
    const { invoke } = runAgent(
      [builtin("LLMErrorHandling", llmErrorHandlingMiddleware())],
      model as unknown as ReturnType<typeof fakeModel>,
    );
    expect((await invoke("first")).messages.at(-1)?.content).toBe("the only scripted answer");
    const failure = (await invoke("second").then(
      () => null,
      (err: unknown) => err,
    )) as { message: string; code?: string; cause?: { code?: string } } | null;
    expect(failure?.message).toContain("no scripted step for call #1");
    expect(failure?.code ?? failure?.cause?.code).toBe("ANTLER_ERR_SCRIPT_EXHAUSTED");
  });
});

describe("loop detection", () => {
  it("warns at 3 identical calls and at 5 withdraws tools and forces a final answer with stop reason loop_capped", async () => {
    const lookup = tool(() => "same result", { name: "lookup", description: "looks up", schema: z.object({ q: z.string() }) });
    let model = fakeModel();
    for (let i = 0; i < 5; i++) model = model.respondWithTools([{ name: "lookup", args: { q: "x" }, id: `c${i}` }]);
    model = model.respond(new AIMessage({ content: "Final: x is unknown.", id: "final" }));
    const { invoke } = runAgent([builtin("LoopDetection", loopDetectionMiddleware())], model, [lookup]);
    const result = await invoke("find x");
    expect(model.callCount).toBe(6);
    const requests = model.calls.map((c) => c.messages.map((m) => String(m.content)).join("\n"));
    expect(requests[2]).not.toContain("Warning: you have called lookup");
    expect(requests[3]).toContain("Warning: you have called lookup with the same arguments 3 times");
    expect(requests[5]).toContain("Tools are withdrawn for the rest of this turn");
    expect(model.calls[5]?.options?.tools ?? []).toEqual([]);
    const results = result.messages.filter((m: unknown) => ToolMessage.isInstance(m)) as ToolMessage[];
    // The fifth identical call is never run; the model answers instead.
    expect(results.map((m) => m.content)).toEqual(Array(4).fill("same result"));
    expect(result.messages.some((m: BaseMessage) => AIMessage.isInstance(m) && m.tool_calls?.some((c) => c.id === "c4"))).toBe(false);
    expect(result.messages.at(-1)?.content).toBe("Final: x is unknown.");
    expect(result.stop_reason).toBe("loop_capped");
  });

  it("does not carry repeats over from an earlier run", async () => {
    const lookup = tool(() => "r", { name: "lookup", description: "looks up", schema: z.object({ q: z.string() }) });
    let model = fakeModel();
    for (let turn = 0; turn < 2; turn++) {
      for (let i = 0; i < 3; i++) model = model.respondWithTools([{ name: "lookup", args: { q: "x" }, id: `t${turn}c${i}` }]);
      model = model.respond(new AIMessage(`answer ${turn}`));
    }
    const { invoke } = runAgent([builtin("LoopDetection", loopDetectionMiddleware())], model, [lookup]);
    await invoke("first");
    const second = await invoke("second");
    expect(second.stop_reason ?? null).toBeNull();
    expect(second.messages.at(-1)?.content).toBe("answer 1");
  });
  it("clears a capped run's stop reason when the next turn starts", async () => {
    const lookup = tool(() => "same", { name: "lookup", description: "looks up", schema: z.object({ q: z.string() }) });
    let model = fakeModel();
    for (let i = 0; i < 5; i++) model = model.respondWithTools([{ name: "lookup", args: { q: "x" }, id: `c${i}` }]);
    model = model.respond(new AIMessage("gave up")).respond(new AIMessage("fresh answer"));
    const { invoke } = runAgent([builtin("LoopDetection", loopDetectionMiddleware())], model, [lookup]);
    expect((await invoke("first")).stop_reason).toBe("loop_capped");
    const second = await invoke("second");
    expect(second.stop_reason).toBeNull();
    expect(second.messages.at(-1)?.content).toBe("fresh answer");
  });
});

describe("dangling tool calls", () => {
  it("adds a placeholder result after an unanswered tool call, and leaves answered ones alone", () => {
    const messages = [
      new HumanMessage("go"),
      new AIMessage({
        content: "",
        tool_calls: [
          { name: "a", args: {}, id: "x" },
          { name: "b", args: {}, id: "y" },
        ],
      }),
      new ToolMessage({ content: "ok", tool_call_id: "x" }),
      new HumanMessage("again"),
    ];
    const patched = patchDanglingToolCalls(messages);
    expect(patched.map((m) => m.getType())).toEqual(["human", "ai", "tool", "tool", "human"]);
    expect((patched[2] as ToolMessage).tool_call_id).toBe("y");
    expect((patched[2] as ToolMessage).status).toBe("error");
  });
});

describe("calling the compiled graph directly", () => {
  // Counts checkpoint reads: LangChain's own per-call state initialization adds a whole extra one per turn.
  class CountingSaver extends MemorySaver {
    reads = 0;
    override async getTuple(config: Parameters<MemorySaver["getTuple"]>[0]) {
      this.reads += 1;
      return super.getTuple(config);
    }
  }
  const ask = (thread: string): [{ messages: BaseMessage[] }, { configurable: { thread_id: string } }] => [
    { messages: [new HumanMessage("hi")] },
    { configurable: { thread_id: thread } },
  ];

  it("reads the checkpoint once per turn with the default pipeline, and the thread state is the same as LangChain's path", async () => {
    const saver = new CountingSaver();
    const baseDir = tempDir();
    const { agent } = createAntlerAgent({ model: new ScriptedChatModel(() => ({ text: "hello" })), baseDir, checkpointer: saver });
    await agent.invoke(...ask("t1"));
    saver.reads = 0;
    const after = (await agent.invoke(...ask("t1"))) as { messages: BaseMessage[]; token_usage?: unknown };
    expect(saver.reads).toBe(1);
    expect(after.messages.map((m) => m.getType())).toEqual(["human", "ai", "human", "ai"]);
    // `withConfig` gives a plain LangChain agent (its own initialization, one more read) over the same state.
    const plain = agent.withConfig({});
    saver.reads = 0;
    const viaLangChain = (await plain.invoke(...ask("t1"))) as { messages: BaseMessage[] };
    expect(saver.reads).toBe(2);
    expect(viaLangChain.messages).toHaveLength(6);
  });

  it("keeps LangChain's initialization when a plugin's state field is required, so a missing value is a clear error", async () => {
    const build = (state: MiddlewareSpec["state"]) =>
      createAntlerAgent({
        model: new ScriptedChatModel(() => ({ text: "ok" })),
        baseDir: tempDir(),
        checkpointer: new MemorySaver(),
        extraMiddleware: [{ name: "counter", state, wrapModelCall: (request, handler) => handler(request) }],
      }).agent;
    await expect(build({ visits: z.number() }).invoke(...ask("t2"))).rejects.toThrow(/required state fields/);
    // With a default the field is filled either way.
    const result = (await build({ visits: z.number().default(7) }).invoke(...ask("t3"))) as { visits?: number };
    expect(result.visits).toBe(7);
  });
});

describe("uploads middleware", () => {
  it("announces a file uploaded between turns in that turn only, after turns with an empty folder", async () => {
    const baseDir = tempDir();
    const seen: string[] = [];
    const model = new ScriptedChatModel((messages) => {
      seen.push(messages.map((m) => String(m.content)).join("\n"));
      return { text: "ok" };
    });
    const { agent } = createAntlerAgent({ model, baseDir, checkpointer: new MemorySaver() });
    const turn = (text: string) =>
      agent.invoke(
        { messages: [new HumanMessage(text)] },
        { configurable: { thread_id: "u1" }, context: { thread_id: "u1", user_id: "ann" } },
      );
    await turn("one");
    await turn("two");
    const uploads = threadPaths(baseDir, "ann", "u1").uploads;
    // Turns that upload nothing leave no folder behind; the uploader makes it.
    expect(existsSync(uploads)).toBe(false);
    mkdirSync(uploads, { recursive: true });
    writeFileSync(join(uploads, "data.csv"), "a,b\n1,2\n");
    await turn("three");
    await turn("four");
    const announced = seen.map((text) => text.includes("/mnt/user-data/uploads/data.csv (8 bytes)"));
    expect(announced).toEqual([false, false, true, false]);
  });
});
