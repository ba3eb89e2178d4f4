import { tmpdir } from "node:os";
import { defineTool, loadAuthoring } from "@antler/kernel/authoring";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { createAgent, fakeModel } from "langchain";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createAntlerAgent } from "../src/agent.js";
import { clarificationMiddleware, isClarificationAllowed } from "../src/middleware/clarification.js";
import { compileThreadPipeline } from "../src/state.js";
import {
  CLARIFICATION_LIMITS,
  createAskClarificationTool,
  type HumanInputRequest,
  normalizeClarificationRequest,
} from "../src/tools/index.js";

// These tests hand tools to LangChain with no kernel started, so they load LangChain for the authoring helpers first.
beforeAll(() => loadAuthoring());

function normalized(args: unknown): { request: HumanInputRequest; text: string } {
  const result = normalizeClarificationRequest(args);
  if (!result.ok) throw new Error(`expected ok, got: ${result.error}`);
  return result;
}

const base = { question: "What should the report cover?", clarification_type: "missing_info" };
const field = (i: number) => ({ name: `f${i}`, type: "text" });

describe("normalizeClarificationRequest", () => {
  it("makes a question without options or fields a v1 free_text request", () => {
    const { request, text } = normalized({ ...base, context: "I found two datasets." });
    expect(request).toEqual({
      version: 1,
      kind: "free_text",
      question: base.question,
      clarification_type: "missing_info",
      context: "I found two datasets.",
    });
    expect(text).toBe("What should the report cover?\n\nI found two datasets.");
  });

  it("makes options a v1 choice with trimmed, de-duplicated, non-empty options and a numbered text fallback", () => {
    const { request, text } = normalized({
      ...base,
      clarification_type: "approach_choice",
      options: ["  PDF ", "PDF", "", "Word", 42, { x: 1 }],
    });
    expect(request.kind).toBe("choice");
    expect(request.version).toBe(1);
    expect(request.options).toEqual(["PDF", "Word", "42"]);
    expect(request.dropped?.map((d) => d.path)).toEqual(["options[1]", "options[2]", "options[5]"]);
    expect(text).toContain("1. PDF\n2. Word\n3. 42");
    expect(text).toContain("Reply with the number");
  });

  it("drops invalid fields and reports each drop: missing, duplicate and unsafe names, select without options", () => {
    const { request } = normalized({
      ...base,
      fields: [
        { name: "topic", label: "Topic", type: "text", required: true },
        { label: "no name" },
        { name: "topic", type: "textarea" },
        { name: "__proto__", type: "text" },
        { name: "bad name!", type: "text" },
        { name: "format", type: "select", options: ["", "  "] },
        { name: "tags", type: "multi_select" },
        "not an object",
        { name: "pages", type: "number" },
      ],
    });
    expect(request.kind).toBe("form");
    expect(request.version).toBe(2);
    expect(request.fields?.map((f) => f.name)).toEqual(["topic", "pages"]);
    const reasons = Object.fromEntries((request.dropped ?? []).map((d) => [d.path, d.reason]));
    expect(reasons["fields[1]"]).toContain("missing name");
    expect(reasons["fields[2]"]).toContain("duplicate name");
    expect(reasons["fields[3]"]).toContain("unsafe name");
    expect(reasons["fields[4]"]).toContain("unsafe name");
    expect(reasons["fields[5]"]).toContain("no usable options");
    expect(reasons["fields[6]"]).toContain("no usable options");
    expect(reasons["fields[7]"]).toContain("not an object");
  });

  it("degrades an unknown field type to text and reports it", () => {
    const { request } = normalized({ ...base, fields: [{ name: "color", type: "color_picker" }] });
    expect(request.fields).toEqual([{ name: "color", type: "text" }]);
    expect(request.dropped).toContainEqual({ path: "fields[0].type", reason: expect.stringContaining("treated as text") });
  });

  it("keeps options only on select and multi_select fields", () => {
    const { request } = normalized({ ...base, fields: [{ name: "note", type: "textarea", options: ["a"] }] });
    expect(request.fields).toEqual([{ name: "note", type: "textarea" }]);
    expect(request.dropped?.[0]?.path).toBe("fields[0].options");
  });

  it("keeps at most 16 fields (17 → 16)", () => {
    const { request } = normalized({ ...base, fields: Array.from({ length: 17 }, (_, i) => field(i)) });
    expect(request.fields).toHaveLength(CLARIFICATION_LIMITS.maxFields);
    expect(request.fields?.at(-1)?.name).toBe("f15");
    expect(request.dropped).toContainEqual({ path: "fields", reason: expect.stringContaining("1 field(s) over the limit of 16") });
  });

  it("keeps at most 24 options, for a choice and for a select field (30 → 24)", () => {
    const thirty = Array.from({ length: 30 }, (_, i) => `option ${i}`);
    expect(normalized({ ...base, options: thirty }).request.options).toHaveLength(24);
    const { request } = normalized({ ...base, fields: [{ name: "pick", type: "select", options: thirty }] });
    expect(request.fields?.[0]?.options).toEqual(thirty.slice(0, 24));
    expect(request.dropped).toContainEqual({ path: "fields[0].options", reason: expect.stringContaining("6 option(s)") });
  });

  it("drops trailing fields until the serialized request fits in 16 KB", () => {
    const options = Array.from({ length: 24 }, (_, i) => `${"x".repeat(200)} ${i}`);
    const fields = Array.from({ length: 8 }, (_, i) => ({ name: `big${i}`, type: "select", options }));
    const { request } = normalized({ ...base, fields });
    expect(Buffer.byteLength(JSON.stringify(request), "utf8")).toBeLessThanOrEqual(CLARIFICATION_LIMITS.maxBytes);
    const kept = request.fields?.map((f) => f.name) ?? [];
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(8);
    expect(kept).toEqual(fields.slice(0, kept.length).map((f) => f.name));
    expect(request.dropped?.some((d) => d.reason.includes("over 16384 bytes"))).toBe(true);
  });

  it("lists form fields with their types and options in the text fallback, and says how to answer", () => {
    const { text } = normalized({
      ...base,
      context: "Needed for the cover page.",
      fields: [
        { name: "title", label: "Title", required: true, placeholder: "Q3 review" },
        { name: "format", type: "select", options: ["PDF", "DOCX"] },
        { name: "due", type: "date" },
        { name: "public", type: "checkbox" },
      ],
    });
    expect(text).toBe(
      [
        "What should the report cover?",
        "Needed for the cover page.",
        [
          "Please provide:",
          "1. Title [title] (text, required) e.g. Q3 review",
          "2. format (choose one, optional): PDF | DOCX",
          "3. due (date, YYYY-MM-DD, optional)",
          "4. public (yes/no, optional)",
        ].join("\n"),
        'Reply with one line per item, as "name: value".',
      ].join("\n\n"),
    );
  });

  it("ignores top-level options when a form is given, and says so", () => {
    const { request } = normalized({ ...base, options: ["a"], fields: [field(0)] });
    expect(request.options).toBeUndefined();
    expect(request.dropped).toContainEqual({ path: "options", reason: expect.stringContaining("select field") });
  });

  it("replaces an unknown clarification_type with missing_info", () => {
    const { request } = normalized({ question: "Which one?", clarification_type: "whatever" });
    expect(request.clarification_type).toBe("missing_info");
    expect(request.dropped?.[0]?.path).toBe("clarification_type");
  });

  it("fails only when there is no question", () => {
    expect(normalizeClarificationRequest({ clarification_type: "missing_info" }).ok).toBe(false);
    expect(normalizeClarificationRequest("junk").ok).toBe(false);
  });
});

describe("isClarificationAllowed", () => {
  it("is false only for non_interactive runs", () => {
    expect(isClarificationAllowed({ non_interactive: true })).toBe(false);
    expect(isClarificationAllowed({ non_interactive: false })).toBe(true);
    expect(isClarificationAllowed({})).toBe(true);
    expect(isClarificationAllowed(undefined)).toBe(true);
  });
});

const echo = defineTool({
  name: "echo",
  description: "Echo the text.",
  schema: z.object({ text: z.string() }),
  run: ({ text }) => `echo: ${text}`,
});

/** An agent with the Clarification middleware compiled the way the kernel compiles it. */
function clarifyingAgent(model: ReturnType<typeof fakeModel>) {
  const pipeline = compileThreadPipeline([{ name: "Clarification", plugin: "kernel", placement: {}, spec: clarificationMiddleware() }]);
  return createAgent({ model, tools: [echo, ...pipeline.tools], middleware: pipeline.middleware });
}

async function invoke(agent: ReturnType<typeof clarifyingAgent>, context: Record<string, unknown> = { thread_id: "t1" }) {
  const result = (await agent.invoke({ messages: [{ role: "user", content: "write me a report" }] }, { context })) as unknown as {
    messages: BaseMessage[];
  };
  return result.messages;
}

describe("Clarification middleware in createAgent", () => {
  it("brings ask_clarification without returnDirect, so ordinary tool steps need no conditional routing", async () => {
    const [tool] = clarificationMiddleware().tools ?? [];
    expect(tool?.name).toBe("ask_clarification");
    expect((tool as unknown as { returnDirect?: boolean }).returnDirect).toBeFalsy();
    const graph = await createAntlerAgent({ model: fakeModel(), tools: [], baseDir: tmpdir() }).agent.graph.getGraphAsync();
    const edges = graph.edges.map((e) => `${e.source}->${e.target}${e.conditional ? "?" : ""}`);
    expect(edges).toContain("tools->model_request");
    expect(edges).not.toContain("tools->__end__?");
  });

  it("ends the turn right after ask_clarification: the model is called once and the last message is the question", async () => {
    const model = fakeModel()
      .respondWithTools([
        {
          name: "ask_clarification",
          id: "ask_1",
          args: {
            question: "Which format?",
            clarification_type: "approach_choice",
            fields: [
              { name: "format", type: "select", options: ["PDF", "HTML"] },
              { label: "junk without a name" },
              { name: "due", type: "calendar" },
            ],
          },
        },
      ])
      .respond(new AIMessage("should never be reached"));
    const messages = await invoke(clarifyingAgent(model));
    expect(model.callCount).toBe(1);
    const last = messages.at(-1);
    expect(ToolMessage.isInstance(last)).toBe(true);
    const message = last as ToolMessage;
    expect(message.name).toBe("ask_clarification");
    expect(message.tool_call_id).toBe("ask_1");
    expect(message.content).toContain("Which format?");
    const humanInput = (message.artifact as { human_input: HumanInputRequest }).human_input;
    expect(humanInput).toMatchObject({ version: 2, kind: "form", clarification_type: "approach_choice" });
    expect(humanInput.fields).toEqual([
      { name: "format", type: "select", options: ["PDF", "HTML"] },
      { name: "due", type: "text" },
    ]);
    expect(humanInput.dropped?.map((d) => d.path)).toEqual(["fields[1]", "fields[2].type"]);
  });

  it("turns a standalone multi-select question, as the model sends it, into a clean one-field form", async () => {
    // The raw tool call: padded strings, a duplicate and an empty option, a run of spaces inside an option.
    const raw = {
      question: "  Which sections should the report include?  ",
      clarification_type: "approach_choice",
      fields: [
        {
          name: " sections ",
          label: "  Sections ",
          type: "multi_select",
          options: [" Intro", "Methods ", "Intro", "", "Appendix   A", "Results"],
        },
      ],
    };
    const model = fakeModel()
      .respondWithTools([{ name: "ask_clarification", id: "ask_ms", args: raw }])
      .respond(new AIMessage("should never be reached"));
    const messages = await invoke(clarifyingAgent(model));
    expect(model.callCount).toBe(1);
    const last = messages.at(-1) as ToolMessage;
    expect((last.artifact as { human_input: HumanInputRequest }).human_input).toEqual({
      version: 2,
      kind: "form",
      question: "Which sections should the report include?",
      clarification_type: "approach_choice",
      fields: [{ name: "sections", label: "Sections", type: "multi_select", options: ["Intro", "Methods", "Appendix A", "Results"] }],
      dropped: [
        { path: "fields[0].options[2]", reason: "duplicate" },
        { path: "fields[0].options[3]", reason: "empty" },
      ],
    });
    expect(last.content).toContain("1. Sections [sections] (choose any, optional): Intro | Methods | Appendix A | Results");
  });

  it("normalizes arguments the tool schema would reject, instead of returning a schema error", async () => {
    const model = fakeModel().respondWithTools([
      { name: "ask_clarification", id: "ask_1", args: { question: "Go ahead?", clarification_type: "yes-no" } },
    ]);
    const messages = await invoke(clarifyingAgent(model));
    const last = messages.at(-1) as ToolMessage;
    expect(last.status).toBe("success");
    expect((last.artifact as { human_input: HumanInputRequest }).human_input).toMatchObject({
      kind: "free_text",
      clarification_type: "missing_info",
    });
    expect(model.callCount).toBe(1);
  });

  it("answers a call without a question with an error, so the turn goes on and the model can retry", async () => {
    const model = fakeModel()
      .respondWithTools([{ name: "ask_clarification", id: "ask_1", args: { clarification_type: "missing_info" } }])
      .respond(new AIMessage("I will assume PDF."));
    const messages = await invoke(clarifyingAgent(model));
    expect(model.callCount).toBe(2);
    const toolMessage = messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(toolMessage.status).toBe("error");
    expect(toolMessage.content).toContain("question");
  });

  it("refuses in a non_interactive run without ending the turn", async () => {
    const model = fakeModel()
      .respondWithTools([
        { name: "ask_clarification", id: "ask_1", args: { question: "Which format?", clarification_type: "missing_info" } },
      ])
      .respond(new AIMessage("Assuming PDF."));
    const messages = await invoke(clarifyingAgent(model), { thread_id: "t1", non_interactive: true });
    expect(model.callCount).toBe(2);
    const toolMessage = messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(toolMessage.status).toBe("error");
    expect(toolMessage.content).toContain("unattended");
  });

  it("passes other tool calls through to the tool", async () => {
    const model = fakeModel()
      .respondWithTools([{ name: "echo", id: "echo_1", args: { text: "hi" } }])
      .respond(new AIMessage("done"));
    const messages = await invoke(clarifyingAgent(model));
    expect(model.callCount).toBe(2);
    expect(messages.find((m) => ToolMessage.isInstance(m))?.content).toBe("echo: hi");
  });

  it("the tool alone (no middleware) gives the same answer; ending the turn is the middleware's part", async () => {
    const model = fakeModel()
      .respondWithTools([
        {
          name: "ask_clarification",
          id: "ask_1",
          args: { question: "Which format?", clarification_type: "approach_choice", options: ["PDF", "HTML"] },
        },
      ])
      .respond(new AIMessage("the model goes on"));
    const agent = createAgent({ model, tools: [createAskClarificationTool()] });
    const result = (await agent.invoke({ messages: [{ role: "user", content: "go" }] })) as unknown as { messages: BaseMessage[] };
    expect(model.callCount).toBe(2);
    const last = result.messages.at(-2) as ToolMessage;
    expect((last.artifact as { human_input: HumanInputRequest }).human_input).toEqual({
      version: 1,
      kind: "choice",
      question: "Which format?",
      clarification_type: "approach_choice",
      options: ["PDF", "HTML"],
    });
  });
});
