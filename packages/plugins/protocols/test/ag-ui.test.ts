// Conformance of `POST /ag-ui` with AG-UI's own client: `HttpAgent.runAgent` posts RunAgentInput, parses the SSE
// stream, validates every event against @ag-ui/core's schemas, checks their order, and applies them to its messages
// and state. A real gateway on loopback, SQLite storage, a scripted model; a subscriber records every event.
import { type AgentSubscriber, type BaseEvent, HttpAgent, type Message } from "@ag-ui/client";
import type { RunningGateway } from "@antler/plugin-gateway";
import type { AntlerClient } from "@antler/plugin-runtime";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AG_UI_INVALID_INPUT } from "../src/index.js";
import {
  ALICE,
  BOB,
  failingMiddleware,
  lastHumanText,
  lookupReply,
  lookupTools,
  type ProtocolsGateway,
  startProtocolsGateway,
} from "./fixtures.js";

const FIRST_PLAN = [
  { content: "Read the brief", status: "in_progress" },
  { content: "Write the answer", status: "pending" },
];
const SECOND_PLAN = [
  { content: "Read the brief", status: "completed" },
  { content: "Write the answer", status: "in_progress" },
  { content: "Check it", status: "pending" },
];

/**
 * Answers by what it was sent: a tool call for "look up", two write_todos calls for "plan", a long wait for
 * "wait", text otherwise.
 */
const script = (messages: BaseMessage[]) => {
  const text = lastHumanText(messages);
  if (text.includes("plan")) {
    const todoResults = messages.slice(messages.findLastIndex((m) => m.getType() === "human")).filter((m) => m instanceof ToolMessage);
    if (todoResults.length === 0) return { toolCalls: [{ id: "call-plan-1", name: "write_todos", args: { todos: FIRST_PLAN } }] };
    if (todoResults.length === 1) return { toolCalls: [{ id: "call-plan-2", name: "write_todos", args: { todos: SECOND_PLAN } }] };
    return { text: "Planned." };
  }
  const shared = lookupReply(messages, text);
  if (shared) return shared;
  if (text.includes("wait")) return { text: "too late", delayMs: 60_000 };
  return { text: `You said: ${text}`, usage: { input_tokens: 3, output_tokens: 4 } };
};

let harness: ProtocolsGateway;
let client: AntlerClient;
let gateway: RunningGateway;

beforeAll(async () => {
  harness = await startProtocolsGateway({
    prefix: "antler-ag-ui-",
    script,
    plugins: [lookupTools, failingMiddleware(lastHumanText)],
    config: { todo: { enabled: true } },
    maxJsonBytes: 256 * 1024,
  });
  ({ client, gateway } = harness);
});

afterAll(async () => {
  await harness?.close();
});

/** An HttpAgent on the gateway's AG-UI endpoint with a key; `seen` gets each HTTP response. */
function agent(threadId: string, options: { key?: string; seen?: Response[]; initialState?: unknown } = {}) {
  return new HttpAgent({
    url: `${gateway.url}/ag-ui`,
    threadId,
    headers: { authorization: `Bearer ${options.key ?? ALICE}` },
    ...(options.initialState !== undefined ? { initialState: options.initialState } : {}),
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      options.seen?.push(response);
      return response;
    },
  });
}

function say(to: HttpAgent, text: string) {
  to.addMessage({ id: crypto.randomUUID(), role: "user", content: text });
}

/** Runs the agent with a subscriber that records every event the client applied, in order. */
async function run(to: HttpAgent, parameters: Parameters<HttpAgent["runAgent"]>[0] = {}) {
  const events: BaseEvent[] = [];
  const subscriber: AgentSubscriber = {
    onEvent: ({ event }) => {
      events.push(event);
    },
  };
  // The client strips (with a warning) any event field its schema lacks, and drops events it does not know: a
  // run that conforms raises none of its warnings.
  const warn = vi.spyOn(console, "warn");
  try {
    const result = await to.runAgent(parameters, subscriber);
    expect(warn.mock.calls.filter((call) => String(call[0]).includes("[ag-ui]"))).toEqual([]);
    return { events, result };
  } finally {
    warn.mockRestore();
  }
}

/** Event types in order, with runs of TEXT_MESSAGE_CONTENT collapsed to one. */
function shape(events: BaseEvent[]): string[] {
  return events.map((e) => e.type).filter((type, i, all) => !(type === "TEXT_MESSAGE_CONTENT" && all[i - 1] === "TEXT_MESSAGE_CONTENT"));
}

const ofType = <T extends BaseEvent>(events: BaseEvent[], type: string) => events.filter((e) => e.type === type) as T[];

describe("AG-UI at POST /ag-ui", () => {
  it("streams a text answer token by token between RUN_STARTED and RUN_FINISHED, with the trace id in both and the header", async () => {
    const seen: Response[] = [];
    const chat = agent("agui-text", { seen });
    say(chat, "hello there");
    const { events, result } = await run(chat);
    expect(seen[0]?.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(shape(events)).toEqual([
      "RUN_STARTED",
      "STATE_SNAPSHOT",
      "STEP_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "STEP_FINISHED",
      "RUN_FINISHED",
    ]);
    const deltas = ofType<BaseEvent & { delta: string }>(events, "TEXT_MESSAGE_CONTENT").map((e) => e.delta);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("You said: hello there");

    const started = events[0] as BaseEvent & { runId: string; threadId: string; metadata: { trace_id: string; run_id_from: string } };
    expect(started.threadId).toBe("agui-text");
    expect(started.metadata.run_id_from).toBe("request");
    const traceId = seen[0]?.headers.get("x-trace-id");
    expect(started.metadata.trace_id).toBe(traceId);
    expect(seen[0]?.headers.get("x-run-id")).toBe(started.runId);
    const finished = events.at(-1) as BaseEvent & { runId: string; usage: Array<{ totalTokens: number }>; metadata: { trace_id: string } };
    expect(finished.metadata.trace_id).toBe(traceId);
    expect(finished.usage).toEqual([{ inputTokens: 3, outputTokens: 4, totalTokens: 7 }]);
    expect(result.result).toMatchObject({ run_id: started.runId, thread_id: "agui-text", trace_id: traceId, usage: { total_tokens: 7 } });

    // The client assembled the assistant message under the Antler message id; the run record is the same run.
    const answer = chat.messages.at(-1) as Message & { content: string };
    expect(answer).toMatchObject({ role: "assistant", content: "You said: hello there" });
    expect(answer.id).toBe((events[3] as BaseEvent & { messageId: string }).messageId);
    const record = await client.getRun("agui-text", started.runId, { userId: "alice" });
    expect(record.status).toBe("success");
    expect(record.trace_id).toBe(traceId);
  });

  it("streams a tool call as START/ARGS/END then its RESULT, and the tool's custom event as CUSTOM", async () => {
    const chat = agent("agui-tool");
    say(chat, "please look up antler");
    const { events } = await run(chat);
    expect(shape(events)).toEqual([
      "RUN_STARTED",
      "STATE_SNAPSHOT",
      "STEP_STARTED",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      "CUSTOM",
      "TOOL_CALL_RESULT",
      "STEP_FINISHED",
      "STEP_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "STEP_FINISHED",
      "RUN_FINISHED",
    ]);
    expect(events[3]).toMatchObject({ toolCallId: "call-lookup", toolCallName: "lookup" });
    expect(events[6]).toMatchObject({ name: "lookup_progress", value: { type: "lookup_progress", word: "antler", done: true } });
    expect(events[7]).toMatchObject({ toolCallId: "call-lookup", content: JSON.stringify({ word: "antler", meaning: "a test word" }) });

    // Applied by the client: the assistant message holds the call, the tool message its result, then the answer.
    const [, call, result, answer] = chat.messages as Array<Message & Record<string, unknown>>;
    expect(call).toMatchObject({
      role: "assistant",
      toolCalls: [{ id: "call-lookup", type: "function", function: { name: "lookup", arguments: '{"word":"antler"}' } }],
    });
    expect(result).toMatchObject({ role: "tool", toolCallId: "call-lookup", content: '{"word":"antler","meaning":"a test word"}' });
    expect(answer).toMatchObject({ role: "assistant", content: "The word means: a test word." });
  });

  it("sends the thread's state once as STATE_SNAPSHOT, then todo changes as JSON Patch deltas the client applies", async () => {
    // Whatever state the client held is replaced by the thread's: Antler's state is the thread's, not the client's.
    const chat = agent("agui-plan", { initialState: { mine: true } });
    say(chat, "make a plan");
    const { events } = await run(chat);
    expect(ofType(events, "STATE_SNAPSHOT")).toHaveLength(1);
    expect(ofType(events, "STATE_SNAPSHOT")[0]).toMatchObject({ snapshot: { todos: [], title: null, artifacts: [] } });
    const deltas = ofType<BaseEvent & { delta: Array<{ op: string; path: string }> }>(events, "STATE_DELTA").map((e) => e.delta);
    expect(deltas).toHaveLength(2);
    expect(deltas[0]).toEqual([
      { op: "add", path: "/todos/0", value: FIRST_PLAN[0] },
      { op: "add", path: "/todos/1", value: FIRST_PLAN[1] },
    ]);
    // The second list is a patch against the first: two statuses change and one item is added.
    expect(deltas[1]).toEqual([
      { op: "replace", path: "/todos/0/status", value: "completed" },
      { op: "replace", path: "/todos/1/status", value: "in_progress" },
      { op: "add", path: "/todos/2", value: SECOND_PLAN[2] },
    ]);
    expect(chat.state).toEqual({ todos: SECOND_PLAN, title: null, artifacts: [] });

    // The next run's snapshot is the thread's state as it now is.
    say(chat, "hello again");
    const second = await run(chat);
    expect(ofType(second.events, "STATE_SNAPSHOT")[0]).toMatchObject({ snapshot: { todos: SECOND_PLAN } });
    expect(ofType(second.events, "STATE_DELTA")).toHaveLength(0);
  });

  it("ends a failed run with RUN_ERROR carrying the error's code, its message and the trace id", async () => {
    const chat = agent("agui-fail");
    say(chat, "please fail");
    const { events } = await run(chat);
    expect(shape(events)).toEqual(["RUN_STARTED", "STATE_SNAPSHOT", "RUN_ERROR"]);
    const started = events[0] as BaseEvent & { runId: string; metadata: { trace_id: string } };
    const error = events.at(-1) as BaseEvent & { code: string; message: string };
    expect(error.code).toMatch(/^ANTLER_ERR_[A-Z_]+$/);
    expect(error.message).toContain("the agent exploded");
    expect(error.message).toContain(started.metadata.trace_id);
    expect((await client.getRun("agui-fail", started.runId, { userId: "alice" })).status).toBe("error");
  });

  it("cancels the Antler run when the client aborts (abortRun)", async () => {
    const chat = agent("agui-stop");
    say(chat, "wait for it");
    let runId: string | undefined;
    const started = new Promise<void>((resolve) => {
      chat.subscribe({
        onRunStartedEvent: ({ event }) => {
          runId = event.runId;
          resolve();
        },
      });
    });
    const running = chat.runAgent().catch(() => undefined);
    await started;
    expect((await client.getRun("agui-stop", runId as string, { userId: "alice" })).status).toBe("running");
    chat.abortRun();
    await running;
    await vi.waitFor(
      async () => expect((await client.getRun("agui-stop", runId as string, { userId: "alice" })).status).toBe("cancelled"),
      {
        timeout: 10_000,
        interval: 50,
      },
    );
  });

  it("ends a run cancelled by someone else (a cancel call) with RUN_FINISHED's cancelled outcome, not an error", async () => {
    const chat = agent("agui-cancelled");
    say(chat, "wait for it");
    let runId: string | undefined;
    const events: BaseEvent[] = [];
    const running = chat.runAgent(
      {},
      {
        onEvent: ({ event }) => {
          events.push(event);
        },
        onRunStartedEvent: ({ event }) => {
          runId = event.runId;
        },
      },
    );
    await vi.waitFor(() => expect(runId).toBeDefined(), { timeout: 10_000, interval: 20 });
    await client.cancelRun("agui-cancelled", runId as string, { userId: "alice" });
    await running;
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED", runId, outcome: { type: "cancelled" } });
    expect(events.map((e) => e.type)).not.toContain("RUN_ERROR");
    expect((await client.getRun("agui-cancelled", runId as string, { userId: "alice" })).status).toBe("cancelled");
  });

  it("continues the thread on a second turn with only the last user message as new input, under the client's run id", async () => {
    const chat = agent("agui-two");
    say(chat, "first");
    await run(chat);
    say(chat, "second");
    const runId = crypto.randomUUID();
    const { events } = await run(chat, { runId });
    expect(events[0]).toMatchObject({ type: "RUN_STARTED", runId, threadId: "agui-two" });
    expect(chat.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "first"],
      ["assistant", "You said: first"],
      ["user", "second"],
      ["assistant", "You said: second"],
    ]);
    const thread = await client.getThread("agui-two", { userId: "alice" });
    expect(thread.messages.filter((m) => m.type === "human").map((m) => m.content)).toEqual(["first", "second"]);
    expect((await client.getRun("agui-two", runId, { userId: "alice" })).status).toBe("success");

    // A run id Antler cannot take (not a UUID) is replaced, and RUN_STARTED says which was asked for.
    say(chat, "third");
    const third = await run(chat, { runId: "my run" });
    const started = third.events[0] as BaseEvent & { runId: string; metadata: { run_id_from: string; requested_run_id: string } };
    expect(started.runId).not.toBe("my run");
    expect(started.metadata).toMatchObject({ run_id_from: "server", requested_run_id: "my run" });
    expect((await client.getRun("agui-two", started.runId, { userId: "alice" })).status).toBe("success");
  });
});

describe("AG-UI bad input: coded errors in the gateway's shape, each with X-Trace-Id", () => {
  const post = (body: unknown, key = ALICE) =>
    fetch(`${gateway.url}/ag-ui`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "text/event-stream" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const input = (threadId: string, messages: unknown[], extra: Record<string, unknown> = {}) => ({
    threadId,
    runId: crypto.randomUUID(),
    messages,
    tools: [],
    context: [],
    state: {},
    forwardedProps: {},
    ...extra,
  });
  const user = (content: unknown) => ({ id: crypto.randomUUID(), role: "user", content });
  async function expectError(response: Response, status: number, code: string | RegExp) {
    expect(response.status).toBe(status);
    expect(response.headers.get("x-trace-id")).toBeTruthy();
    const body = (await response.json()) as { error: { code: string; message: string; where?: string } };
    expect(body.error.code).toMatch(code);
    return body.error;
  }

  it("answers 400 naming the field for a body that does not validate", async () => {
    const invalid = "ANTLER_ERR_GATEWAY_INVALID_REQUEST";
    expect((await expectError(await post({ threadId: "agui-bad", runId: "r" }), 400, invalid)).message).toMatch(/^messages: /);
    const badThread = await expectError(await post(input("no spaces please", [user("hi")])), 400, invalid);
    expect(badThread.message).toMatch(/^threadId: /);
    const badProp = await expectError(
      await post(input("agui-bad", [user("hi")], { forwardedProps: { thinking_enabled: "yes" } })),
      400,
      invalid,
    );
    expect(badProp.message).toMatch(/^forwardedProps\.thinking_enabled: /);
  });

  it("answers 400 for a run that does not end with the user's text, or whose resume entry carries no decision", async () => {
    const assistantLast = await expectError(
      await post(input("agui-bad", [{ id: "a", role: "assistant", content: "x" }])),
      400,
      AG_UI_INVALID_INPUT,
    );
    expect(assistantLast.where).toBe("messages[0].role");
    const noText = await expectError(
      await post(input("agui-bad", [user([{ type: "image", source: { type: "url", value: "https://example.com/a.png" } }])])),
      400,
      AG_UI_INVALID_INPUT,
    );
    expect(noText.where).toBe("messages[0].content");
    const resume = await expectError(
      await post(input("agui-bad", [user("hi")], { resume: [{ interruptId: "i", status: "resolved" }] })),
      400,
      AG_UI_INVALID_INPUT,
    );
    expect(resume.where).toBe("resume[0].payload");
    expect(resume.message).toContain("needs a payload with `approved`");
  });

  it("answers 404 for Alice's thread asked by Bob, and HttpAgent rejects with the status and body", async () => {
    const alice = agent("agui-alice");
    say(alice, "mine");
    await run(alice);
    const history = [...alice.messages, user("more")];
    await expectError(await post(input("agui-alice", history), BOB), 404, "ANTLER_ERR_THREAD_NOT_FOUND");
    // An unknown thread with history is the same 404 for its would-be owner.
    await expectError(await post(input("agui-never-started", history)), 404, "ANTLER_ERR_THREAD_NOT_FOUND");

    const bob = agent("agui-alice", { key: BOB });
    for (const message of history) bob.addMessage(message as Message);
    const failure = await bob.runAgent().then(
      () => undefined,
      (error: unknown) => error as Error & { status: number; payload: { error: { code: string } } },
    );
    expect(failure?.status).toBe(404);
    expect(failure?.payload.error.code).toBe("ANTLER_ERR_THREAD_NOT_FOUND");
  });

  it("answers 409 while another run holds the thread", async () => {
    const first = agent("agui-busy");
    say(first, "wait for it");
    const started = new Promise<void>((resolve) => first.subscribe({ onRunStartedEvent: () => resolve() }));
    const running = first.runAgent().catch(() => undefined);
    await started;
    await expectError(await post(input("agui-busy", [user("me too")])), 409, "ANTLER_ERR_THREAD_BUSY");
    first.abortRun();
    await running;
  });

  it("answers 400 for an unknown model in forwardedProps, before anything starts", async () => {
    await expectError(await post(input("agui-model", [user("hi")], { forwardedProps: { model: "no-such-model" } })), 400, /MODEL/);
  });

  it("answers 413 for a body over the gateway's max_json_bytes", async () => {
    await expectError(await post(input("agui-big", [user("x".repeat(300 * 1024))])), 413, "ANTLER_ERR_GATEWAY_PAYLOAD_TOO_LARGE");
  });
});
