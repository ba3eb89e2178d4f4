import { RunEventMapper } from "@antler/plugin-protocols/run-events";
import type { StreamEvent } from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import { AcpUpdateEncoder, acpStopReason, historyUpdates, planEntries, promptText, toolKind, toolTitle } from "../src/agent-updates.js";
import { serveSettings } from "../src/serve-command.js";

const run = { runId: "r1", threadId: "t1", traceId: "0".repeat(32) };

function encodeAll(events: StreamEvent[]) {
  const mapper = new RunEventMapper(run);
  const encoder = new AcpUpdateEncoder();
  return events.flatMap((e) => mapper.map(e)).flatMap((e) => encoder.encode(e));
}

describe("AcpUpdateEncoder over RunEventMapper", () => {
  it("with approval on, calls stay pending through a run_paused; decided() starts approved ones and fails rejected ones", () => {
    const mapper = new RunEventMapper(run);
    const encoder = new AcpUpdateEncoder({ holdStart: true });
    const encode = (events: StreamEvent[]) => events.flatMap((e) => mapper.map(e)).flatMap((e) => encoder.encode(e));
    const paused = encode([
      {
        type: "messages-tuple",
        data: {
          type: "ai",
          id: "m1",
          tool_calls: [
            { id: "c1", name: "bash", args: { command: "ls" } },
            { id: "c2", name: "write_file", args: { path: "/mnt/a.md" } },
          ],
        },
      },
      { type: "custom", data: { type: "run_paused", run_id: "r1", interrupt: { kind: "approval", calls: [] } } },
    ] as StreamEvent[]);
    expect(paused.map((u) => [u.sessionUpdate, "status" in u ? u.status : undefined])).toEqual([
      ["tool_call", "pending"],
      ["tool_call", "pending"],
    ]);
    const decided = encoder.decided(
      new Map([
        ["c1", { approved: true }],
        ["c2", { approved: false, reason: "not today" }],
      ]),
    );
    expect(decided).toEqual([
      { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "in_progress" },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "c2",
        status: "failed",
        content: [{ type: "content", content: { type: "text", text: "Rejected: not today" } }],
      },
    ]);
    // Without a pause, a held call goes in_progress just before its result.
    const ran = encode([
      { type: "messages-tuple", data: { type: "ai", id: "m2", tool_calls: [{ id: "c3", name: "ls", args: {} }] } },
      { type: "messages-tuple", data: { type: "tool", id: "tm3", tool_call_id: "c3", name: "ls", content: "a.md" } },
    ] as StreamEvent[]);
    expect(ran.map((u) => ("status" in u ? u.status : u.sessionUpdate))).toEqual(["pending", "in_progress", "completed"]);
  });

  it("text deltas become agent_message_chunk updates carrying the message id", () => {
    const updates = encodeAll([
      { type: "messages-tuple", data: { type: "ai", id: "m1", content: "Hel" } },
      { type: "messages-tuple", data: { type: "ai", id: "m1", content: "lo" } },
    ]);
    expect(updates).toEqual([
      { sessionUpdate: "agent_message_chunk", messageId: "m1", content: { type: "text", text: "Hel" } },
      { sessionUpdate: "agent_message_chunk", messageId: "m1", content: { type: "text", text: "lo" } },
    ]);
  });

  it("a tool call is announced pending then in_progress; an error result marks it failed with the output as content", () => {
    const updates = encodeAll([
      {
        type: "messages-tuple",
        data: { type: "ai", id: "m1", tool_calls: [{ id: "c1", name: "read_file", args: { path: "/mnt/a.md" } }] },
      },
      {
        type: "messages-tuple",
        data: { type: "tool", id: "tm1", tool_call_id: "c1", name: "read_file", content: "Error: no such file", status: "error" },
      },
    ] as StreamEvent[]);
    expect(updates).toEqual([
      {
        sessionUpdate: "tool_call",
        toolCallId: "c1",
        title: "read_file: /mnt/a.md",
        kind: "read",
        status: "pending",
        rawInput: { path: "/mnt/a.md" },
      },
      { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "in_progress" },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "c1",
        status: "failed",
        content: [{ type: "content", content: { type: "text", text: "Error: no such file" } }],
        rawOutput: "Error: no such file",
      },
    ]);
  });

  it("todos become a plan, a title a session_info_update; an unchanged list sends nothing", () => {
    const values = (todos: unknown[] | null, title: string | null) =>
      ({ type: "values", data: { title, messages: [], artifacts: [], summary_text: null, todos, stop_reason: null } }) as StreamEvent;
    const todos = [
      { content: "a", status: "completed" },
      { content: "b", status: "in_progress" },
    ];
    const updates = encodeAll([values(null, null), values(todos, "Notes"), values(todos, "Notes")]);
    expect(updates).toEqual([
      {
        sessionUpdate: "plan",
        entries: [
          { content: "a", priority: "medium", status: "completed" },
          { content: "b", priority: "medium", status: "in_progress" },
        ],
      },
      { sessionUpdate: "session_info_update", title: "Notes" },
    ]);
  });

  it("an ask_clarification result is also the agent's message, so the question shows in the conversation", () => {
    const updates = encodeAll([
      {
        type: "messages-tuple",
        data: { type: "ai", id: "m1", tool_calls: [{ id: "q1", name: "ask_clarification", args: { question: "Which?" } }] },
      },
      {
        type: "messages-tuple",
        data: { type: "tool", id: "tm", tool_call_id: "q1", name: "ask_clarification", content: "Which?", status: "success" },
      },
    ] as StreamEvent[]);
    expect(updates.at(-1)).toEqual({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Which?" } });
  });
});

describe("the smaller mappings", () => {
  it("stop reasons: loop and turn caps are max_turn_requests, a token cap max_tokens, the rest end_turn", () => {
    expect(acpStopReason(null)).toBe("end_turn");
    expect(acpStopReason("loop_capped")).toBe("max_turn_requests");
    expect(acpStopReason("turn_capped")).toBe("max_turn_requests");
    expect(acpStopReason("token_capped")).toBe("max_tokens");
    expect(acpStopReason("model_error")).toBe("end_turn");
  });

  it("tool titles prefer the description argument; kinds follow the tool name", () => {
    expect(toolTitle("bash", { description: "Run the tests", command: "pnpm test" })).toBe("Run the tests");
    expect(toolTitle("web_search", { query: "acp" })).toBe("web_search: acp");
    expect(toolTitle("lookup", { word: "x" })).toBe("lookup");
    expect(toolKind("str_replace")).toBe("edit");
    expect(toolKind("bash")).toBe("execute");
    expect(toolKind("lookup")).toBe("other");
  });

  it("plan entries skip malformed todos and treat an unknown status as pending", () => {
    expect(planEntries([{ content: "a", status: "weird" }, { status: "pending" }, null, "x"])).toEqual([
      { content: "a", priority: "medium", status: "pending" },
    ]);
    expect(planEntries(null)).toEqual([]);
  });

  it("prompt text: text blocks joined, text resources and links appended as context, empty or binary refused", () => {
    expect(
      promptText([
        { type: "text", text: "hi" },
        { type: "text", text: "there" },
      ]),
    ).toEqual({ ok: true, text: "hi\nthere" });
    const withContext = promptText([
      { type: "text", text: "fix it" },
      { type: "resource", resource: { uri: "file:///a.ts", text: "const a = 1;" } },
      { type: "resource_link", uri: "file:///b.ts", name: "b.ts" },
    ]);
    expect(withContext).toEqual({
      ok: true,
      text: 'fix it\n\n<resource uri="file:///a.ts">\nconst a = 1;\n</resource>\n<resource_link uri="file:///b.ts" name="b.ts" />',
    });
    expect(promptText([{ type: "text", text: " " }])).toMatchObject({ ok: false, message: expect.stringContaining("no text") });
    expect(
      promptText([
        { type: "text", text: "x" },
        { type: "resource", resource: { uri: "file:///i.png", blob: "AAAA" } },
      ]),
    ).toMatchObject({
      ok: false,
      message: expect.stringContaining("binary"),
    });
    expect(promptText([{ type: "audio", data: "AAAA", mimeType: "audio/wav" }])).toMatchObject({ ok: false });
  });

  it("history: user and agent text as chunks, tool calls with their finished results, empty texts skipped", () => {
    expect(
      historyUpdates([
        { type: "human", id: "h1", content: "look it up" },
        { type: "ai", id: "a1", content: "", tool_calls: [{ id: "c1", name: "lookup", args: { word: "w" } }] },
        { type: "tool", id: "t1", content: "found", tool_call_id: "c1", name: "lookup", status: "success" },
        { type: "ai", id: "a2", content: "It means w." },
        { type: "system", id: "s1", content: "summary" },
      ]),
    ).toEqual([
      { sessionUpdate: "user_message_chunk", messageId: "h1", content: { type: "text", text: "look it up" } },
      { sessionUpdate: "tool_call", toolCallId: "c1", title: "lookup", kind: "other", status: "in_progress", rawInput: { word: "w" } },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "c1",
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: "found" } }],
      },
      { sessionUpdate: "agent_message_chunk", messageId: "a2", content: { type: "text", text: "It means w." } },
    ]);
  });

  it("command settings: flags override the serve config; a bad user id is a config error naming the flag", () => {
    expect(serveSettings([], { user: "default" })).toEqual({ userId: "default" });
    expect(serveSettings(["--user", "alice", "--model", "big"], { user: "default", agent: "coder" })).toEqual({
      userId: "alice",
      agent: "coder",
      model: "big",
    });
    expect(() => serveSettings(["--user", "../etc"], { user: "default" })).toThrow(/--user/);
    expect(() => serveSettings(["--nope"], { user: "default" })).toThrow();
  });
});
