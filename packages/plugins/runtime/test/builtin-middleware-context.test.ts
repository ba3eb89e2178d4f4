import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AntlerTool, composeChain, type Logger, type MiddlewareSpec, threadPaths } from "@antler/kernel";
import { defineTool, loadAuthoring } from "@antler/kernel/authoring";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent, fakeModel } from "langchain";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunContextValues } from "../src/context.js";
import {
  approximateTokenCount,
  extractiveSummary,
  planSummarization,
  SUMMARY_TAG,
  summarizationMiddleware,
} from "../src/middleware/summarization.js";
import { cleanTitle, titleMiddleware } from "../src/middleware/title.js";
import { todoMiddleware } from "../src/middleware/todo.js";
import { viewImageMiddleware } from "../src/middleware/view-image.js";
import { compileThreadPipeline } from "../src/state.js";
import { createViewImageTool } from "../src/tools/index.js";
import { tempDir } from "./fixtures.js";

// These tests hand tools to LangChain with no kernel started, so they load LangChain for the authoring helpers first.
beforeAll(() => loadAuthoring());

type Model = ReturnType<typeof fakeModel>;
type State = { messages: BaseMessage[] } & Record<string, unknown>;

function buildAgent(specs: readonly MiddlewareSpec[], model: Model, tools: readonly AntlerTool[] = []) {
  const chain = composeChain(
    specs.map((spec) => ({ name: spec.name, plugin: "@antler/kernel", placement: {}, spec })),
    [],
  );
  const compiled = compileThreadPipeline(chain);
  const agent = createAgent({
    model,
    tools: [...tools, ...compiled.tools],
    middleware: compiled.middleware,
    checkpointer: new MemorySaver(),
  });
  return {
    async run(input: Record<string, unknown>, context: RunContextValues = {}, threadId = "t1"): Promise<State> {
      const invoke = agent.invoke.bind(agent) as unknown as (input: unknown, config: unknown) => Promise<State>;
      return invoke(input, { configurable: { thread_id: threadId }, context: { user_id: "u", thread_id: threadId, ...context } });
    },
  };
}

/** The system prompt the scripted model received on its `index`-th call ("" when there was none). */
function systemPromptOf(model: Model, index: number): string {
  const first = model.calls[index]?.messages[0];
  return first && SystemMessage.isInstance(first) ? first.text : "";
}

function asChatModel(model: Model): BaseChatModel {
  return model;
}

// A thread where the boundary of the last two messages falls between a tool call (a4) and its result (t3).
function longThread(): BaseMessage[] {
  return [
    new HumanMessage({ id: "h0", content: "Refactor /mnt/user-data/workspace/app.ts to use async IO" }),
    new AIMessage({
      id: "a1",
      content: "Reading the file first.",
      tool_calls: [{ id: "c1", name: "read_file", args: { path: "/mnt/user-data/workspace/app.ts" } }],
    }),
    new ToolMessage({ id: "t1", content: `import fs from "fs";\n${"const x = 1;\n".repeat(40)}`, tool_call_id: "c1", name: "read_file" }),
    new AIMessage({ id: "a2", content: "Decided to switch to fs/promises." }),
    new HumanMessage({ id: "h1", content: "Now add tests" }),
    new AIMessage({
      id: "a3",
      content: "",
      tool_calls: [{ id: "c2", name: "write_file", args: { path: "/mnt/user-data/workspace/app.test.ts" } }],
    }),
    new ToolMessage({ id: "t2", content: "written", tool_call_id: "c2", name: "write_file" }),
    new AIMessage({ id: "a4", content: "", tool_calls: [{ id: "c3", name: "bash", args: { command: "npm test" } }] }),
    new ToolMessage({ id: "t3", content: "3 tests passed", tool_call_id: "c3", name: "bash" }),
    new HumanMessage({ id: "h2", content: "What is left to do?" }),
  ];
}

describe("Summarization", () => {
  it("over the trigger: folds older messages into summary_text, sends the model the first request and a tail with tool-call pairs whole, and keeps every message in the thread", async () => {
    const model = fakeModel().respond(new AIMessage("Only the README is left.")).respond(new AIMessage("Yes."));
    const agent = buildAgent([summarizationMiddleware({ triggerTokens: 50, keepMessages: 2 })], model);
    const out = await agent.run({ messages: longThread() });

    // Cut after the last 2 would split a4 from t3; it moves back to a4. h0 (the task) stays.
    expect(model.calls[0]?.messages.filter((m) => !SystemMessage.isInstance(m)).map((m) => m.id)).toEqual(["h0", "a4", "t3", "h2"]);
    // The thread itself keeps all ten messages and the answer: the full history stays readable.
    expect(out.messages.slice(0, 10).map((m) => m.id)).toEqual(longThread().map((m) => m.id));
    expect(out.messages).toHaveLength(11);
    const summary = out.summary_text as string;
    expect(summary).toContain("Now add tests");
    expect(summary).toContain("/mnt/user-data/workspace/app.test.ts");
    expect(summary).toContain("read_file");
    expect(summary.length).toBeLessThanOrEqual(4000);

    // The model saw the summary in its system prompt, and not the removed messages.
    expect(systemPromptOf(model, 0)).toContain(`<${SUMMARY_TAG}>`);
    expect(systemPromptOf(model, 0)).toContain(summary);
    expect(model.calls[0]?.messages.map((m) => m.id)).not.toContain("a1");

    // The summary and its cut are state, not messages: the next turn's request carries a summary again and starts
    // at or after the cut (this tiny trigger summarizes again), although the thread still holds every message.
    const next = await agent.run({ messages: [new HumanMessage({ id: "h3", content: "Thanks, anything else?" })] });
    expect(systemPromptOf(model, 1)).toContain(summary);
    const sent = model.calls[1]?.messages.filter((m) => !SystemMessage.isInstance(m)).map((m) => m.id);
    expect(sent?.[0]).toBe("h0");
    expect(sent).not.toContain("a1");
    expect(sent).not.toContain("h1");
    expect(sent?.at(-1)).toBe("h3");
    expect(next.messages).toHaveLength(13);
  });

  it("under the trigger: leaves messages and summary_text alone and adds no summary block", async () => {
    const model = fakeModel().respond(new AIMessage("Only the README is left."));
    const agent = buildAgent([summarizationMiddleware()], model);
    const out = await agent.run({ messages: longThread() });
    expect(out.messages.map((m) => m.id).slice(0, 10)).toEqual(longThread().map((m) => m.id));
    expect(out.summary_text ?? null).toBeNull();
    expect(systemPromptOf(model, 0)).not.toContain(SUMMARY_TAG);
  });

  it("with a model: the summary is the model's, and the model is given the previous summary to carry over", async () => {
    const summarizer = fakeModel().respond(new AIMessage("Switched app.ts to fs/promises; tests added and passing."));
    const model = fakeModel().respond(new AIMessage("Only the README is left."));
    const agent = buildAgent([summarizationMiddleware({ model: asChatModel(summarizer), triggerTokens: 50, keepMessages: 2 })], model);
    const out = await agent.run({ messages: longThread(), summary_text: "Earlier: the user prefers tabs." });

    expect(out.summary_text).toBe("Switched app.ts to fs/promises; tests added and passing.");
    const prompt = summarizer.calls[0]?.messages.map((m) => m.text).join("\n") ?? "";
    expect(prompt).toContain("Earlier: the user prefers tabs.");
    expect(prompt).toContain("[user] Now add tests");
    expect(prompt).toContain("file paths");
    expect(systemPromptOf(model, 0)).toContain("Switched app.ts to fs/promises");
  });

  it("when the summarizer model throws: falls back to the extractive summary, which covers the previous one, and logs no content", async () => {
    const summarizer = fakeModel().respond(new Error("provider down"));
    const warnings: unknown[] = [];
    const logger = { warn: (...args: unknown[]) => void warnings.push(args) } as unknown as Pick<Logger, "warn">;
    const model = fakeModel().respond(new AIMessage("Only the README is left."));
    const agent = buildAgent(
      [summarizationMiddleware({ model: asChatModel(summarizer), triggerTokens: 50, keepMessages: 2, logger })],
      model,
    );
    const out = await agent.run({ messages: longThread(), summary_text: "Earlier: the user prefers tabs." });

    expect(summarizer.calls).toHaveLength(1);
    const summary = out.summary_text as string;
    expect(summary).toContain("Earlier: the user prefers tabs.");
    expect(summary).toContain("Now add tests");
    expect(model.calls[0]?.messages.map((m) => m.id)).not.toContain("a1");
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings)).not.toContain("Now add tests");
  });

  it("triggerMessages summarizes a thread that is short in tokens but long in messages", async () => {
    const model = fakeModel().respond(new AIMessage("ok"));
    const agent = buildAgent([summarizationMiddleware({ triggerMessages: 5, keepMessages: 2 })], model);
    const out = await agent.run({ messages: longThread() });
    expect(typeof out.summary_text).toBe("string");
    expect(model.calls[0]?.messages.map((m) => m.id)).not.toContain("h1");
    expect(out.messages.map((m) => m.id)).toContain("h1");
  });

  it("planSummarization follows tool-call ids across the cut and summarizes an oversized first message", () => {
    const messages = [
      new HumanMessage({ id: "h0", content: "x".repeat(4000) }),
      new AIMessage({
        id: "a1",
        content: "",
        tool_calls: [
          { id: "p1", name: "a", args: {} },
          { id: "p2", name: "b", args: {} },
        ],
      }),
      new ToolMessage({ id: "t1", content: "one", tool_call_id: "p1" }),
      new HumanMessage({ id: "h1", content: "interleaved" }),
      new ToolMessage({ id: "t2", content: "two", tool_call_id: "p2" }),
      new HumanMessage({ id: "h2", content: "next" }),
    ];
    // Keeping 2 would keep t2 without a1; the cut moves to a1.
    const plan = planSummarization(messages, 2, 100);
    expect(plan?.summarize.map((m) => m.id)).toEqual(["h0"]);
    // A first message that fits the budget stays, which here leaves nothing to summarize.
    expect(planSummarization(messages, 2, 10_000)).toBeNull();
  });

  it("the extractive summary respects maxSummaryChars", () => {
    const many = Array.from({ length: 200 }, (_, i) => new HumanMessage({ id: `m${i}`, content: `message number ${i} ${"y".repeat(80)}` }));
    const summary = extractiveSummary("previous ".repeat(500), many, 1000);
    expect(summary.length).toBeLessThanOrEqual(1000);
    expect(summary).toContain("message number 0");
    expect(summary).toContain("message number 199");
    expect(summary).toMatch(/messages omitted/);
  });
});

describe("Todo", () => {
  const plan = [
    { content: "Read the code", status: "in_progress" },
    { content: "Write tests", status: "pending" },
  ];

  it("write_todos replaces state todos and the next request's system prompt shows the list", async () => {
    const model = fakeModel()
      .respondWithTools([{ name: "write_todos", args: { todos: plan } }])
      .respond(new AIMessage("Planned."));
    const out = await buildAgent([todoMiddleware()], model).run({ messages: [new HumanMessage("Refactor the app")] });
    expect(out.todos).toEqual(plan);
    const result = out.messages.find((m) => ToolMessage.isInstance(m));
    expect(result?.text).toContain("Todo list updated");
    expect(systemPromptOf(model, 0)).toContain("(none yet)");
    expect(systemPromptOf(model, 1)).toContain("1. [in_progress] Read the code\n2. [pending] Write tests");
  });

  it("rejects two in_progress items with an error ToolMessage and leaves todos unchanged", async () => {
    const bad = [
      { content: "A", status: "in_progress" },
      { content: "B", status: "in_progress" },
    ];
    const model = fakeModel()
      .respondWithTools([{ name: "write_todos", args: { todos: plan } }])
      .respondWithTools([{ name: "write_todos", args: { todos: bad } }])
      .respond(new AIMessage("Fixed."));
    const out = await buildAgent([todoMiddleware()], model).run({ messages: [new HumanMessage("Refactor the app")] });
    const results = out.messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
    expect(results[1]?.status).toBe("error");
    expect(results[1]?.text).toMatch(/2 items are in_progress; at most one may be/);
    expect(out.todos).toEqual(plan);
  });

  it("rejects parallel write_todos calls in one response", async () => {
    const model = fakeModel()
      .respondWithTools([
        { name: "write_todos", args: { todos: plan } },
        { name: "write_todos", args: { todos: [] } },
      ])
      .respond(new AIMessage("ok"));
    const out = await buildAgent([todoMiddleware()], model).run({ messages: [new HumanMessage("go")] });
    const results = out.messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
    expect(results.map((m) => m.status)).toEqual(["error", "error"]);
    expect(out.todos).toBeUndefined();
  });

  it("plan_mode false hides write_todos and the planning section; unset keeps them", async () => {
    const seen: string[][] = [];
    const probe: MiddlewareSpec = {
      name: "Probe",
      wrapModelCall(request, handler) {
        seen.push(request.tools.map((t) => String((t as { name?: string }).name)));
        return handler(request);
      },
    };
    const model = fakeModel().respond(new AIMessage("a")).respond(new AIMessage("b"));
    const agent = buildAgent([todoMiddleware(), probe], model);
    await agent.run({ messages: [new HumanMessage("hi")] }, { plan_mode: false });
    await agent.run({ messages: [new HumanMessage("hi again")] }, {}, "t2");
    expect(seen[0]).not.toContain("write_todos");
    expect(systemPromptOf(model, 0)).not.toContain("<todo_list>");
    expect(seen[1]).toContain("write_todos");
    expect(systemPromptOf(model, 1)).toContain("<todo_list>");
  });
});

describe("Title", () => {
  const question = "How do I parse YAML files in Node? I keep getting errors.";

  it("sets the title from the model after the first exchange and keeps it on the next turn", async () => {
    const titler = fakeModel().respond(new AIMessage('"Parsing YAML files in Node.js quickly today."'));
    const model = fakeModel().respond(new AIMessage("Use the yaml package.")).respond(new AIMessage("You're welcome."));
    const agent = buildAgent([titleMiddleware({ model: asChatModel(titler) })], model);
    const first = await agent.run({ messages: [new HumanMessage(question)] });
    expect(first.title).toBe("Parsing YAML files in Node.js quickly");
    expect(titler.calls[0]?.messages.map((m) => m.text).join("\n")).toContain("Use the yaml package.");

    const second = await agent.run({ messages: [new HumanMessage("Thanks! Something else entirely now")] });
    expect(second.title).toBe("Parsing YAML files in Node.js quickly");
    expect(titler.calls).toHaveLength(1);
  });

  it("falls back to the first user message when the model throws", async () => {
    const titler = fakeModel().respond(new Error("no title for you"));
    const model = fakeModel().respond(new AIMessage("Use the yaml package."));
    const out = await buildAgent([titleMiddleware({ model: asChatModel(titler) })], model).run({ messages: [new HumanMessage(question)] });
    expect(out.title).toBe("How do I parse YAML files");
  });

  it("without a model, titles from the first user message, capped by maxChars", async () => {
    const model = fakeModel().respond(new AIMessage("Use the yaml package."));
    const out = await buildAgent([titleMiddleware({ maxChars: 16 })], model).run({ messages: [new HumanMessage(question)] });
    expect(out.title).toBe("How do I parse");
  });

  it("waits for a final answer: no title while the turn ends on a tool call", async () => {
    const titler = fakeModel().respond(new AIMessage("Weather lookup"));
    const lookup = defineTool({
      name: "lookup",
      description: "looks things up",
      schema: z.object({}),
      returnDirect: true,
      run: () => "sunny",
    });
    const model = fakeModel().respondWithTools([{ name: "lookup", args: {} }]);
    const out = await buildAgent([titleMiddleware({ model: asChatModel(titler) })], model, [lookup]).run({
      messages: [new HumanMessage("weather?")],
    });
    expect(out.title).toBeUndefined();
    expect(titler.calls).toHaveLength(0);
  });

  it("cleanTitle strips prefixes, markup, quotes and trailing punctuation", () => {
    expect(cleanTitle("Title: **“Hello World!”**\nmore", 6, 60)).toBe("Hello World");
    expect(cleanTitle("Supercalifragilisticexpialidocious", 6, 10)).toBe("Supercalif");
  });
});

// A 1×1 PNG, written to the thread's outputs folder by each test.
const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

function imageBlocks(message: BaseMessage | undefined): string[] {
  if (!message || typeof message.content === "string") return [];
  return message.content.flatMap((b) => {
    const block = b as { type: string; image_url?: { url?: unknown } };
    return block.type === "image_url" ? [String(block.image_url?.url)] : [];
  });
}

describe("ViewImage", () => {
  function setup(): { baseDir: string; viewImage: AntlerTool; size: number; sha256: string } {
    const baseDir = tempDir();
    const outputs = threadPaths(baseDir, "u", "t1").outputs;
    mkdirSync(outputs, { recursive: true });
    const bytes = Buffer.from(PNG_BASE64, "base64");
    writeFileSync(join(outputs, "dot.png"), bytes);
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    // Stands in for the real view_image tool: it records what to show in state `viewed_images`.
    const viewImage = defineTool({
      name: "view_image",
      description: "view images",
      schema: z.object({ paths: z.array(z.string()) }),
      run: ({ paths }, runtime) =>
        new Command({
          update: {
            viewed_images: Object.fromEntries(paths.map((p) => [p, { mime_type: "image/png", size: bytes.length, sha256 }])),
            messages: [new ToolMessage({ content: "viewing", tool_call_id: runtime.toolCallId, name: "view_image" })],
          },
        }),
    });
    return { baseDir, viewImage, size: bytes.length, sha256 };
  }

  it("shows a viewed PNG as a data-URL image block in the next request only, then clears viewed_images", async () => {
    const { baseDir, viewImage } = setup();
    const model = fakeModel()
      .respondWithTools([{ name: "view_image", args: { paths: ["/mnt/user-data/outputs/dot.png"] } }])
      .respond(new AIMessage("A single pixel."))
      .respond(new AIMessage("Still a pixel."));
    const agent = buildAgent([viewImageMiddleware({ baseDir })], model, [viewImage]);
    const out = await agent.run({ messages: [new HumanMessage("What is in dot.png?")] });

    expect(imageBlocks(model.calls[0]?.messages.at(-1))).toEqual([]);
    const shown = model.calls[1]?.messages.at(-1);
    expect(shown && HumanMessage.isInstance(shown)).toBe(true);
    expect(imageBlocks(shown)).toEqual([`data:image/png;base64,${PNG_BASE64}`]);
    expect(shown?.text).toContain("/mnt/user-data/outputs/dot.png");

    expect(out.viewed_images).toEqual({});
    expect(out.messages.flatMap((m) => imageBlocks(m))).toEqual([]);
    await agent.run({ messages: [new HumanMessage("And now?")] });
    expect(model.calls[2]?.messages.flatMap((m) => imageBlocks(m))).toEqual([]);
  });

  it("skips a file it cannot read, with a note naming it", async () => {
    const { baseDir, viewImage } = setup();
    const model = fakeModel()
      .respondWithTools([{ name: "view_image", args: { paths: ["/mnt/user-data/outputs/dot.png", "/mnt/user-data/outputs/gone.png"] } }])
      .respond(new AIMessage("One pixel; the other file is missing."));
    const out = await buildAgent([viewImageMiddleware({ baseDir })], model, [viewImage]).run({ messages: [new HumanMessage("look")] });
    const shown = model.calls[1]?.messages.at(-1);
    expect(imageBlocks(shown)).toHaveLength(1);
    expect(shown?.text).toContain("/mnt/user-data/outputs/gone.png: could not be read");
    expect(shown?.text).not.toContain(baseDir);
    expect(out.viewed_images).toEqual({});
  });
});

describe("ViewImage with the real view_image tool", () => {
  const path = "/mnt/user-data/outputs/dot.png";
  function writeDot(baseDir: string): string {
    const outputs = threadPaths(baseDir, "u", "t1").outputs;
    mkdirSync(outputs, { recursive: true });
    const file = join(outputs, "dot.png");
    writeFileSync(file, Buffer.from(PNG_BASE64, "base64"));
    return file;
  }

  it("shows the bytes view_image checked when the file is unchanged at the next model call", async () => {
    const baseDir = tempDir();
    writeDot(baseDir);
    const model = fakeModel()
      .respondWithTools([{ name: "view_image", args: { image_path: path } }])
      .respond(new AIMessage("A pixel."));
    await buildAgent([viewImageMiddleware({ baseDir })], model, [createViewImageTool({ baseDir })]).run({
      messages: [new HumanMessage("look")],
    });
    expect(imageBlocks(model.calls[1]?.messages.at(-1))).toEqual([`data:image/png;base64,${PNG_BASE64}`]);
  });

  it("refuses to show a file whose bytes changed after view_image checked them, and asks to view it again", async () => {
    const baseDir = tempDir();
    const file = writeDot(baseDir);
    // Same size, one byte different: only the hash tells the two versions apart.
    const swapped = Buffer.from(PNG_BASE64, "base64");
    swapped[swapped.length - 20] = (swapped[swapped.length - 20] ?? 0) ^ 0xff;
    // Rewrites the file between the tool call and the next model call, the way a concurrent writer would.
    const rewriter: MiddlewareSpec = {
      name: "RewriteAfterViewing",
      beforeModel: (state) => {
        if (Object.keys((state.viewed_images as object | undefined) ?? {}).length > 0) writeFileSync(file, swapped);
        return undefined;
      },
    };
    const model = fakeModel()
      .respondWithTools([{ name: "view_image", args: { image_path: path } }])
      .respond(new AIMessage("I could not see it."));
    const out = await buildAgent([rewriter, viewImageMiddleware({ baseDir })], model, [createViewImageTool({ baseDir })]).run({
      messages: [new HumanMessage("look")],
    });
    const note = model.calls[1]?.messages.at(-1);
    expect(imageBlocks(note)).toEqual([]);
    expect(note?.text).toContain(`${path}: changed after it was viewed; view it again`);
    expect(out.viewed_images).toEqual({});
  });
});

describe("Summarization hysteresis", () => {
  // Twelve exchanges of about 100 tokens each (400 characters per message).
  const padded = (n: number) =>
    Array.from({ length: n }, (_, i) =>
      i % 2 === 0
        ? new HumanMessage({ id: `h${i}`, content: `q${i} ${"x".repeat(400)}` })
        : new AIMessage({ id: `a${i}`, content: `r${i} ${"y".repeat(400)}` }),
    );

  it("leaves the thread under target_tokens after a summary, so the next small turn does not summarize again", async () => {
    const summarizer = fakeModel().respond(new AIMessage("summary one")).respond(new AIMessage("summary two"));
    const model = fakeModel().respond(new AIMessage("first answer")).respond(new AIMessage("second answer"));
    const agent = buildAgent([summarizationMiddleware({ model: asChatModel(summarizer), triggerTokens: 1000, keepMessages: 10 })], model);
    const first = await agent.run({ messages: padded(12) });
    expect(summarizer.calls).toHaveLength(1);
    // Ten kept messages would be about 1,040 tokens, over the trigger again; the tail fits 600 instead.
    const sent = (model.calls[0]?.messages ?? []).filter((m) => !SystemMessage.isInstance(m) && m.id !== "h0");
    expect(approximateTokenCount(sent)).toBeLessThanOrEqual(600);
    expect(first.messages).toHaveLength(13);
    await agent.run({ messages: [new HumanMessage({ id: "h-next", content: `next ${"z".repeat(400)}` })] });
    expect(summarizer.calls).toHaveLength(1);
  });

  it("refuses a target_tokens at or above trigger_tokens", () => {
    expect(() => summarizationMiddleware({ triggerTokens: 1000, targetTokens: 1000 })).toThrow(
      /targetTokens \(1000\) must be below triggerTokens/,
    );
  });
});
