import type { StreamEvent } from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import { encodeUiMessageChunks, protocolsConfigSchema, RunEventMapper } from "../src/index.js";

const run = { runId: "r1", threadId: "t1", traceId: "0123456789abcdef0123456789abcdef" };
const values = (todos: unknown[] | null, title: string | null = null): StreamEvent => ({
  type: "values",
  data: { title, messages: [], artifacts: [], summary_text: null, todos, stop_reason: null },
});

describe("RunEventMapper", () => {
  it("maps the runtime's run_paused event to its custom event and a run-paused with the interrupt; the AI SDK asks approval per call", () => {
    const mapper = new RunEventMapper(run);
    const interrupt = {
      kind: "approval",
      calls: [{ tool_call_id: "c1", tool: "bash", args: { command: "ls" }, rule: "shell", reason: "Shell" }],
      expires_at: "2030-01-01T00:00:00.000Z",
    };
    const data = { type: "run_paused", run_id: "r1", thread_id: "t1", trace_id: run.traceId, interrupt, interrupt_id: "i-1" };
    const mapped = mapper.map({ type: "custom", data });
    expect(mapped).toEqual([
      { kind: "custom", name: "run_paused", data },
      { kind: "run-paused", runId: "r1", interruptId: "i-1", interrupt },
    ]);
    expect(encodeUiMessageChunks(mapped[1] as (typeof mapped)[number])).toEqual([
      { type: "tool-approval-request", approvalId: "approval:c1", toolCallId: "c1" },
    ]);
    // Another custom event with an `interrupt` key is only a custom event.
    expect(mapper.map({ type: "custom", data: { type: "progress", interrupt: {} } })).toEqual([
      { kind: "custom", name: "progress", data: { type: "progress", interrupt: {} } },
    ]);
  });

  it("reports a state key only when it changes, and a thread's earlier todos once", () => {
    const mapper = new RunEventMapper(run);
    const todos = [{ content: "write", status: "pending" }];
    expect(mapper.map(values(null))).toEqual([]);
    expect(mapper.map(values(todos))).toEqual([{ kind: "state", key: "todos", value: todos }]);
    expect(mapper.map(values(todos))).toEqual([]);
    expect(mapper.map(values(todos, "A title"))).toEqual([{ kind: "state", key: "title", value: "A title" }]);
    const resumed = new RunEventMapper(run);
    expect(resumed.map(values(todos))).toEqual([{ kind: "state", key: "todos", value: todos }]);
  });

  it("closes an open text before a tool call, and the model turn before the end", () => {
    const mapper = new RunEventMapper(run);
    const events: StreamEvent[] = [
      { type: "messages-tuple", data: { type: "ai", id: "m1", content: "Let me " } },
      { type: "messages-tuple", data: { type: "ai", id: "m1", content: "look." } },
      { type: "messages-tuple", data: { type: "ai", id: "m1", content: "", tool_calls: [{ id: "c1", name: "ls", args: {} }] } },
      { type: "messages-tuple", data: { type: "tool", id: "t1", tool_call_id: "c1", name: "ls", content: "boom", status: "error" } },
      { type: "messages-tuple", data: { type: "ai", id: "m2", content: "Sorry." } },
      {
        type: "end",
        data: {
          run_id: "r1",
          thread_id: "t1",
          trace_id: run.traceId,
          usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
          stop_reason: null,
        },
      },
    ];
    const chunks = events.flatMap((e) => mapper.map(e)).flatMap(encodeUiMessageChunks);
    expect(chunks.map((c) => c.type)).toEqual([
      "start-step",
      "text-start",
      "text-delta",
      "text-delta",
      "text-end",
      "tool-input-available",
      "tool-output-error",
      "finish-step",
      "start-step",
      "text-start",
      "text-delta",
      "text-end",
      "finish-step",
      "finish",
    ]);
    expect(chunks[6]).toEqual({ type: "tool-output-error", toolCallId: "c1", errorText: "boom" });
  });

  it("streams reasoning and a tool call's input as parts of their own, closed before what follows", () => {
    const mapper = new RunEventMapper(run);
    const events: StreamEvent[] = [
      { type: "messages-tuple", data: { type: "ai", id: "m1", content: "", reasoning: "Hmm. " } },
      { type: "messages-tuple", data: { type: "ai", id: "m1", content: "", reasoning: "Yes." } },
      { type: "messages-tuple", data: { type: "ai", id: "m1", content: "On it." } },
      {
        type: "messages-tuple",
        data: { type: "ai", id: "m1", content: "", tool_call_chunks: [{ index: 0, id: "c1", name: "ls", args: '{"p' }] },
      },
      { type: "messages-tuple", data: { type: "ai", id: "m1", content: "", tool_call_chunks: [{ index: 0, args: '":1}' }] } },
      // A provider whose pieces carry no id: nothing streams, the whole call still arrives.
      { type: "messages-tuple", data: { type: "ai", id: "m1", content: "", tool_call_chunks: [{ index: 1, args: "{}" }] } },
      {
        type: "messages-tuple",
        data: {
          type: "ai",
          id: "m1",
          content: "",
          tool_calls: [
            { id: "c1", name: "ls", args: { p: 1 } },
            { id: "c2", name: "pwd", args: {} },
          ],
        },
      },
    ];
    const chunks = events.flatMap((e) => mapper.map(e)).flatMap(encodeUiMessageChunks);
    expect(chunks).toEqual([
      { type: "start-step" },
      { type: "reasoning-start", id: "m1" },
      { type: "reasoning-delta", id: "m1", delta: "Hmm. " },
      { type: "reasoning-delta", id: "m1", delta: "Yes." },
      { type: "reasoning-end", id: "m1" },
      { type: "text-start", id: "m1" },
      { type: "text-delta", id: "m1", delta: "On it." },
      { type: "text-end", id: "m1" },
      { type: "tool-input-start", toolCallId: "c1", toolName: "ls" },
      { type: "tool-input-delta", toolCallId: "c1", inputTextDelta: '{"p' },
      { type: "tool-input-delta", toolCallId: "c1", inputTextDelta: '":1}' },
      { type: "tool-input-available", toolCallId: "c1", toolName: "ls", input: { p: 1 } },
      { type: "tool-input-available", toolCallId: "c2", toolName: "pwd", input: {} },
    ]);
  });
});

describe("the protocols config", () => {
  it("defaults the AI SDK prefix to /ai-sdk and refuses a prefix under /api or with a trailing slash", () => {
    expect(protocolsConfigSchema.parse({}).ai_sdk).toEqual({ enabled: true, prefix: "/ai-sdk" });
    expect(protocolsConfigSchema.safeParse({ ai_sdk: { prefix: "/api/ai" } }).success).toBe(false);
    expect(protocolsConfigSchema.safeParse({ ai_sdk: { prefix: "/ai-sdk/" } }).success).toBe(false);
    expect(protocolsConfigSchema.parse({ ai_sdk: { prefix: "/front/chat-ui" } }).ai_sdk.prefix).toBe("/front/chat-ui");
  });
});
