// Conformance of the LangGraph runs routes with the official client: `@langchain/langgraph-sdk`'s `Client` (the one
// `useStream` drives) against a real gateway on loopback, SQLite storage, a scripted model. Every run is an Antler
// run: the run records, the run event log and the thread are Antler's own.
import type { RunningGateway } from "@antler/plugin-gateway";
import type { AntlerClient } from "@antler/plugin-runtime";
import type { BaseMessage } from "@langchain/core/messages";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ALICE,
  askClarification,
  BOB,
  lastText,
  lookupReply,
  lookupTools,
  type ProtocolsGateway,
  startProtocolsGateway,
} from "./fixtures.js";

/** A tool call for "look up", a question for "ask me", a long wait for "sleep long", text (several words) otherwise. */
const script = (messages: BaseMessage[]) => {
  const text = lastText(messages);
  const shared = lookupReply(messages, text);
  if (shared) return shared;
  if (text.includes("ask me")) return askClarification("Which colour?", ["red", "blue"]);
  if (text.includes("sleep long")) return { text: "too late", delayMs: 60_000 };
  return { text: `You said: ${text}` };
};

let harness: ProtocolsGateway;
let antler: AntlerClient;
let gateway: RunningGateway;
let alice: Client;
let bob: Client;

beforeAll(async () => {
  harness = await startProtocolsGateway({ prefix: "antler-lg-runs-", script, plugins: [lookupTools], maxJsonBytes: 64 * 1024 });
  ({ client: antler, gateway } = harness);
  const sdk = (key: string) => new Client({ apiUrl: `${gateway.url}/langgraph`, apiKey: key, callerOptions: { maxRetries: 0 } });
  alice = sdk(ALICE);
  bob = sdk(BOB);
});

afterAll(async () => {
  await harness?.close();
});

const human = (content: string) => ({ messages: [{ type: "human", content }] });

async function newThread(): Promise<string> {
  return (await antler.createThread({ userId: "alice" })).thread_id;
}

interface Part {
  event: string;
  data: unknown;
  id?: string | undefined;
}

async function collect(
  stream: AsyncIterable<{ event: string; data: unknown; id?: string | undefined }>,
  stopAfter?: number,
): Promise<Part[]> {
  const parts: Part[] = [];
  for await (const part of stream) {
    parts.push({ event: part.event, data: part.data, id: part.id });
    if (stopAfter !== undefined && parts.length >= stopAfter) break;
  }
  return parts;
}

type Msg = { type: string; id?: string; content: string; tool_calls?: Array<{ name: string; args: unknown }>; name?: string };
const valuesOf = (parts: Part[]) =>
  parts.filter((p) => p.event === "values").map((p) => p.data as { messages: Msg[]; __interrupt__?: unknown[] });

async function rawPost(path: string, body: unknown, key = ALICE): Promise<Response> {
  return fetch(`${gateway.url}/langgraph${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function runStatus(threadId: string, runId: string): Promise<string> {
  return (await alice.runs.get(threadId, runId)).status;
}

describe("runs.stream", () => {
  it("streams metadata first, then values, messages tuples (tokens one by one), updates, custom and events, each frame with an id", async () => {
    const threadId = await newThread();
    let created: { run_id: string; thread_id?: string } | undefined;
    const parts = await collect(
      alice.runs.stream(threadId, "agent", {
        input: human("please look up antler"),
        streamMode: ["values", "messages-tuple", "updates", "custom", "events"],
        onRunCreated: (meta) => {
          created = meta;
        },
      }),
    );
    expect(parts[0]?.event).toBe("metadata");
    const runId = (parts[0]?.data as { run_id: string } | undefined)?.run_id as string;
    expect(parts[0]?.data).toEqual({ run_id: runId, attempt: 1 });
    expect(created).toEqual({ run_id: runId, thread_id: threadId });
    expect(parts.at(-1)?.event).toBe("end");
    // Every frame has an id from the Antler event it came from, never going back.
    const seqs = parts.map((p) => Number((p.id ?? "").split(".")[0]));
    expect(seqs.every((s, i) => s >= 1 && (i === 0 || s >= (seqs[i - 1] as number)))).toBe(true);

    const tuples = parts.filter((p) => p.event === "messages").map((p) => p.data as [Record<string, unknown>, Record<string, unknown>]);
    const call = tuples.find(([chunk]) => Array.isArray(chunk.tool_calls) && (chunk.tool_calls as unknown[]).length > 0);
    expect(call?.[0]).toMatchObject({
      type: "AIMessageChunk",
      tool_calls: [{ name: "lookup", args: { word: "antler" }, type: "tool_call" }],
    });
    expect(tuples.find(([chunk]) => chunk.type === "tool")?.[0]).toMatchObject({
      type: "tool",
      tool_call_id: "call-lookup",
      name: "lookup",
    });
    const answer = tuples.filter(([chunk]) => chunk.type === "AIMessageChunk" && typeof chunk.content === "string" && chunk.content !== "");
    // Tokens arrive as several deltas of one message id, which add up to the final text.
    expect(answer.length).toBeGreaterThan(1);
    expect(new Set(answer.map(([chunk]) => chunk.id)).size).toBe(1);
    expect(answer.map(([chunk]) => chunk.content).join("")).toBe("The word means: a test word.");
    expect(answer[0]?.[1]).toMatchObject({ langgraph_node: "model_request", run_id: runId, thread_id: threadId });

    const last = valuesOf(parts).at(-1);
    expect(last?.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(last?.messages.at(-1)?.content).toBe("The word means: a test word.");
    expect(last?.messages.at(-1)?.id).toBe(answer[0]?.[0].id);

    const updates = parts.filter((p) => p.event === "updates").map((p) => p.data as Record<string, { messages?: Msg[] }>);
    expect(updates.map((u) => Object.keys(u)[0])).toEqual(["model_request", "tools", "model_request"]);
    expect(updates[1]?.tools?.messages?.[0]).toMatchObject({ type: "tool", name: "lookup" });

    expect(parts.filter((p) => p.event === "custom").map((p) => p.data)).toEqual([{ type: "lookup_progress", word: "antler", done: true }]);
    const events = parts.filter((p) => p.event === "events").map((p) => (p.data as { event: string }).event);
    expect(events).toContain("on_chat_model_stream");
    expect(events).toContain("on_tool_start");
    expect(events).toContain("on_tool_end");
    expect(events).toContain("on_custom_event");
    expect(await runStatus(threadId, runId)).toBe("success");
  });

  it("stream mode messages sends metadata, partial messages growing, and each message complete once", async () => {
    const threadId = await newThread();
    const parts = await collect(alice.runs.stream(threadId, "agent", { input: human("hello there friend"), streamMode: "messages" }));
    const partial = parts.filter((p) => p.event === "messages/partial").map((p) => (p.data as Msg[])[0]?.content);
    expect(partial.length).toBeGreaterThan(1);
    expect(partial.at(-1)).toBe("You said: hello there friend");
    const complete = parts.filter((p) => p.event === "messages/complete").map((p) => (p.data as Msg[])[0]);
    expect(complete).toHaveLength(1);
    expect(complete[0]).toMatchObject({ type: "ai", content: "You said: hello there friend" });
    expect(parts.some((p) => p.event === "messages/metadata")).toBe(true);
  });

  it("the default stream mode is values, and a {role, content} input works like a LangGraph message dict", async () => {
    const threadId = await newThread();
    const parts = await collect(alice.runs.stream(threadId, "agent", { input: { messages: [{ role: "user", content: "hi" }] } }));
    expect([...new Set(parts.map((p) => p.event))]).toEqual(["metadata", "values", "end"]);
    expect(
      valuesOf(parts)
        .at(-1)
        ?.messages.map((m) => m.content),
    ).toEqual(["hi", "You said: hi"]);
  });

  it("if_not_exists create starts a run on a thread that does not exist yet; reject (the default) is a 404", async () => {
    const threadId = `lg-new-${Date.now()}`;
    await expect(collect(alice.runs.stream(threadId, "agent", { input: human("x") }))).rejects.toThrow(/HTTP 404/);
    const parts = await collect(alice.runs.stream(threadId, "agent", { input: human("created"), ifNotExists: "create" }));
    expect(valuesOf(parts).at(-1)?.messages.at(-1)?.content).toBe("You said: created");
  });
});

describe("runs.wait, create, join, joinStream, list, get, cancel", () => {
  it("runs.wait answers the thread's final values", async () => {
    const threadId = await newThread();
    const values = (await alice.runs.wait(threadId, "agent", { input: human("hello") })) as { messages: Msg[] };
    expect(values.messages.map((m) => [m.type, m.content])).toEqual([
      ["human", "hello"],
      ["ai", "You said: hello"],
    ]);
  });

  it("runs.create returns the Run at once; join waits for the end; list and get show it", async () => {
    const threadId = await newThread();
    const run = await alice.runs.create(threadId, "agent", { input: human("please look up antler"), metadata: { origin: "test" } });
    expect(run).toMatchObject({ thread_id: threadId, assistant_id: "agent", metadata: { origin: "test" }, multitask_strategy: "reject" });
    expect(["pending", "running", "success"]).toContain(run.status);
    const values = (await alice.runs.join(threadId, run.run_id)) as { messages: Msg[] };
    expect(values.messages.at(-1)?.content).toBe("The word means: a test word.");
    expect(await runStatus(threadId, run.run_id)).toBe("success");
    const listed = await alice.runs.list(threadId);
    expect(listed.map((r) => r.run_id)).toEqual([run.run_id]);
    expect((listed[0] as unknown as { kwargs: unknown }).kwargs).toMatchObject({ stream_mode: ["values"] });
  });

  it("joinStream replays a run; cut after some frames, it resumes with lastEventId exactly where it stopped", async () => {
    const threadId = await newThread();
    const run = await alice.runs.create(threadId, "agent", {
      input: human("please look up antler"),
      streamMode: ["values", "messages-tuple", "updates"],
    });
    const whole = await collect(alice.runs.joinStream(threadId, run.run_id));
    expect(whole[0]?.event).toBe("metadata");
    expect(whole.at(-1)?.event).toBe("end");
    expect(whole.some((p) => p.event === "updates")).toBe(true);
    for (const cut of [3, 7, whole.length - 2]) {
      const head = await collect(alice.runs.joinStream(threadId, run.run_id), cut);
      const tail = await collect(alice.runs.joinStream(threadId, run.run_id, { lastEventId: head.at(-1)?.id }));
      expect([...head, ...tail]).toEqual(whole);
    }
  });

  it("joinStream follows a run live until it ends", async () => {
    const threadId = await newThread();
    const run = await alice.runs.create(threadId, "agent", { input: human("hello live"), streamMode: ["messages-tuple", "values"] });
    const parts = await collect(alice.runs.joinStream(threadId, run.run_id));
    expect(parts.at(-1)?.event).toBe("end");
    expect(valuesOf(parts).at(-1)?.messages.at(-1)?.content).toBe("You said: hello live");
  });

  it("runs.cancel with wait stops a run: its status is interrupted; action rollback is refused with 422", async () => {
    const threadId = await newThread();
    const run = await alice.runs.create(threadId, "agent", { input: human("sleep long") });
    await expect(alice.runs.cancel(threadId, run.run_id, false, "rollback")).rejects.toThrow(/HTTP 422.*rollback/);
    await alice.runs.cancel(threadId, run.run_id, true);
    expect(await runStatus(threadId, run.run_id)).toBe("interrupted");
    // Its stream, joined afterwards, ends with LangGraph's error frame.
    const parts = await collect(alice.runs.joinStream(threadId, run.run_id));
    expect(parts.at(-1)).toMatchObject({ event: "error", data: { error: "ANTLER_ERR_RUN_CANCELLED" } });
  });

  it("deleting a run is refused with 422: Antler keeps runs with their thread", async () => {
    const threadId = await newThread();
    const values = await alice.runs.wait(threadId, "agent", { input: human("hi") });
    expect(values).toBeDefined();
    const [run] = await alice.runs.list(threadId);
    await expect(alice.runs.delete(threadId, run?.run_id as string)).rejects.toThrow(/HTTP 422/);
  });
});

describe("stateless runs", () => {
  it("runs.stream and runs.wait without a thread run on a temporary thread that is deleted afterwards", async () => {
    const before = (await antler.listThreads({ userId: "alice", limit: 1000 })).length;
    const parts = await collect(alice.runs.stream(null, "agent", { input: human("stateless hi"), streamMode: ["values"] }));
    expect(valuesOf(parts).at(-1)?.messages.at(-1)?.content).toBe("You said: stateless hi");
    const values = (await alice.runs.wait(null, "agent", { input: human("stateless second") })) as { messages: Msg[] };
    expect(values.messages).toHaveLength(2);
    expect((await antler.listThreads({ userId: "alice", limit: 1000 })).length).toBe(before);
  });

  it("on_completion keep keeps the temporary thread", async () => {
    const before = (await antler.listThreads({ userId: "alice", limit: 1000 })).length;
    // The SDK's types leave onCompletion out of stateless runs.wait; its body sends it, so the test sends it raw.
    expect((await rawPost("/runs/wait", { assistant_id: "agent", input: human("keep me"), on_completion: "keep" })).status).toBe(200);
    expect((await antler.listThreads({ userId: "alice", limit: 1000 })).length).toBe(before + 1);
  });
});

describe("multitask strategies", () => {
  it("reject refuses a second run on a busy thread (409); interrupt stops the first; enqueue waits its turn; rollback is a 422", async () => {
    const threadId = await newThread();
    const first = await alice.runs.create(threadId, "agent", { input: human("sleep long") });
    await expect(alice.runs.create(threadId, "agent", { input: human("second") })).rejects.toThrow(/HTTP 409.*THREAD_BUSY/);
    await expect(alice.runs.create(threadId, "agent", { input: human("second"), multitaskStrategy: "rollback" })).rejects.toThrow(
      /HTTP 422.*rollback/,
    );
    const queued = await alice.runs.create(threadId, "agent", { input: human("queued"), multitaskStrategy: "enqueue" });
    expect(queued.status).toBe("pending");
    const interrupting = await alice.runs.create(threadId, "agent", { input: human("interrupting"), multitaskStrategy: "interrupt" });
    // Interrupt cancels every run ahead of it: the first and the queued one.
    const values = (await alice.runs.join(threadId, interrupting.run_id)) as { messages: Msg[] };
    expect(values.messages.at(-1)?.content).toBe("You said: interrupting");
    expect(await runStatus(threadId, first.run_id)).toBe("interrupted");
    expect(await runStatus(threadId, queued.run_id)).toBe("interrupted");
  });

  it("enqueue runs after the run ahead ends, on the thread it left", async () => {
    const threadId = await newThread();
    const first = await alice.runs.create(threadId, "agent", { input: human("sleep long") });
    const queued = await alice.runs.create(threadId, "agent", { input: human("after"), multitaskStrategy: "enqueue" });
    expect(queued.status).toBe("pending");
    await alice.runs.cancel(threadId, first.run_id, true);
    const values = (await alice.runs.join(threadId, queued.run_id)) as { messages: Msg[] };
    expect(values.messages.at(-1)?.content).toBe("You said: after");
    expect(await runStatus(threadId, queued.run_id)).toBe("success");
  });
});

describe("interrupts", () => {
  it("a run that asks the user ends interrupted with __interrupt__ in its last values; command.resume answers it", async () => {
    const threadId = await newThread();
    const parts = await collect(
      alice.runs.stream(threadId, "agent", { input: human("ask me something"), streamMode: ["values", "updates"] }),
    );
    const runId = (parts[0]?.data as { run_id: string } | undefined)?.run_id as string;
    const last = valuesOf(parts).at(-1);
    expect(last?.__interrupt__).toEqual([
      { id: "call-ask", value: expect.objectContaining({ question: "Which colour?", kind: "choice", options: ["red", "blue"] }) },
    ]);
    expect(parts.filter((p) => p.event === "updates").at(-1)?.data).toEqual({ __interrupt__: last?.__interrupt__ });
    expect(await runStatus(threadId, runId)).toBe("interrupted");
    expect((await alice.runs.list(threadId))[0]?.status).toBe("interrupted");

    const resumed = await collect(alice.runs.stream(threadId, "agent", { command: { resume: "blue" }, streamMode: "values" }));
    const after = valuesOf(resumed).at(-1);
    expect(after?.__interrupt__).toBeUndefined();
    expect(after?.messages.slice(-2).map((m) => [m.type, m.content])).toEqual([
      ["human", "blue"],
      ["ai", "You said: blue"],
    ]);
    // The answered run stays success; the first is no longer the newest, so it shows as its record says.
    expect((await alice.runs.list(threadId)).map((r) => r.status)).toEqual(["success", "success"]);
  });

  it("the interrupt is one and the same in the stream, runs.join, thread.interrupts, a thread search and getState", async () => {
    const threadId = await newThread();
    const parts = await collect(
      alice.runs.stream(threadId, "agent", { input: human("ask me something"), streamMode: ["values", "updates"] }),
    );
    const runId = (parts[0]?.data as { run_id: string } | undefined)?.run_id as string;
    const streamed = valuesOf(parts).at(-1)?.__interrupt__;
    expect(streamed).toEqual([
      {
        id: "call-ask",
        value: expect.objectContaining({ question: "Which colour?", kind: "choice", options: ["red", "blue"], text: expect.any(String) }),
      },
    ]);
    const joined = (await alice.runs.join(threadId, runId)) as { __interrupt__?: unknown[] };
    expect(joined.__interrupt__).toEqual(streamed);
    const thread = await alice.threads.get(threadId);
    expect(thread.status).toBe("interrupted");
    expect(thread.interrupts).toEqual({ "call-ask": streamed });
    const [found] = await alice.threads.search({ ids: [threadId] });
    expect(found?.interrupts).toEqual({ "call-ask": streamed });
    // LangGraph's servers answer a state's pending interrupts as `interrupts` too; the SDK's type has only the tasks'.
    const state = (await alice.threads.getState(threadId)) as Awaited<ReturnType<Client["threads"]["getState"]>> & {
      interrupts: unknown[];
    };
    expect(state.interrupts).toEqual(streamed);
    for (const interrupt of state.tasks.flatMap((task) => task.interrupts)) expect([interrupt]).toEqual(streamed);
  });

  it("runs.wait on a run that asks answers the values with __interrupt__", async () => {
    const threadId = await newThread();
    const values = (await alice.runs.wait(threadId, "agent", { input: human("ask me") })) as { __interrupt__?: Array<{ id: string }> };
    expect(values.__interrupt__?.[0]?.id).toBe("call-ask");
  });
});

describe("bad input: LangGraph's error shape (detail) with Antler's code, and X-Trace-Id", () => {
  async function expectError(response: Response, status: number, code: string): Promise<{ detail: string; error: { code: string } }> {
    expect(response.status).toBe(status);
    expect(response.headers.get("x-trace-id")).toMatch(/\S+/);
    const body = (await response.json()) as { detail: string; error: { code: string } };
    expect(body.error.code).toBe(code);
    expect(typeof body.detail).toBe("string");
    return body;
  }

  it("an unsupported stream mode is a 422 naming the supported ones", async () => {
    const threadId = await newThread();
    const body = await expectError(
      await rawPost(`/threads/${threadId}/runs/stream`, { assistant_id: "agent", input: human("x"), stream_mode: ["values", "debug"] }),
      422,
      "ANTLER_ERR_LANGGRAPH_INVALID_REQUEST",
    );
    expect(body.detail).toContain('"debug"');
    for (const mode of ["values", "updates", "messages", "messages-tuple", "custom", "events"]) expect(body.detail).toContain(mode);
    await expect(collect(alice.runs.stream(threadId, "agent", { input: human("x"), streamMode: "checkpoints" }))).rejects.toThrow(
      /HTTP 422/,
    );
  });

  it("resuming a thread that is not interrupted is a 409", async () => {
    const threadId = await newThread();
    await alice.runs.wait(threadId, "agent", { input: human("hi") });
    await expectError(
      await rawPost(`/threads/${threadId}/runs/stream`, { assistant_id: "agent", command: { resume: "blue" } }),
      409,
      "ANTLER_ERR_LANGGRAPH_NOT_INTERRUPTED",
    );
  });

  it("Bob on Alice's thread and run is a 404, like an unknown one", async () => {
    const threadId = await newThread();
    await alice.runs.wait(threadId, "agent", { input: human("mine") });
    const [run] = await alice.runs.list(threadId);
    await expectError(
      await rawPost(`/threads/${threadId}/runs/wait`, { assistant_id: "agent", input: human("x") }, BOB),
      404,
      "ANTLER_ERR_THREAD_NOT_FOUND",
    );
    await expect(bob.runs.get(threadId, run?.run_id as string)).rejects.toThrow(/HTTP 404/);
    await expect(bob.runs.list(threadId)).rejects.toThrow(/HTTP 404/);
    await expect(collect(bob.runs.joinStream(threadId, run?.run_id as string))).rejects.toThrow(/HTTP 404/);
    await expect(bob.runs.cancel(threadId, run?.run_id as string)).rejects.toThrow(/HTTP 404/);
  });

  it("an unknown assistant is a 404", async () => {
    const threadId = await newThread();
    await expectError(
      await rawPost(`/threads/${threadId}/runs/stream`, { assistant_id: "no-such-agent", input: human("x") }),
      404,
      "ANTLER_ERR_LANGGRAPH_ASSISTANT_NOT_FOUND",
    );
  });

  it("an oversized body is a 413", async () => {
    const threadId = await newThread();
    const response = await rawPost(`/threads/${threadId}/runs/stream`, { assistant_id: "agent", input: human("x".repeat(100 * 1024)) });
    expect(response.status).toBe(413);
    expect(response.headers.get("x-trace-id")).toMatch(/\S+/);
    expect(((await response.json()) as { error: { code: string } }).error.code).toMatch(/^ANTLER_ERR_/);
  });

  it("an input without a human message, and both input and command, are 422s naming the field", async () => {
    const threadId = await newThread();
    const none = await expectError(
      await rawPost(`/threads/${threadId}/runs/wait`, { assistant_id: "agent", input: { messages: [{ type: "ai", content: "x" }] } }),
      422,
      "ANTLER_ERR_LANGGRAPH_INVALID_REQUEST",
    );
    expect(none.detail).toContain("no human message");
    await expectError(
      await rawPost(`/threads/${threadId}/runs/wait`, { assistant_id: "agent", input: human("x"), command: { resume: "y" } }),
      422,
      "ANTLER_ERR_LANGGRAPH_INVALID_REQUEST",
    );
  });
});
