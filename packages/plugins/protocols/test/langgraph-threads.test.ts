// Conformance of the LangGraph assistants and threads routes with LangGraph's own SDK: `Client` from
// `@langchain/langgraph-sdk` against a real gateway on loopback (SQLite storage, a scripted model), its threads
// seeded by real runs. Alice and Bob have API keys; the SDK sends `x-api-key`.
import type { RunningGateway } from "@antler/plugin-gateway";
import type { AntlerClient } from "@antler/plugin-runtime";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALICE, askClarification, BOB, lastText, type ProtocolsGateway, startProtocolsGateway } from "./fixtures.js";

/** Asks a clarification for "ask me", answers text otherwise. */
const script = (messages: BaseMessage[]) => {
  const last = messages[messages.length - 1];
  if (last instanceof ToolMessage || last instanceof AIMessage) return { text: "?" };
  const text = lastText(messages);
  if (text.includes("ask me")) return askClarification("Which city?", ["Oslo", "Rome"]);
  if (text.includes("wait")) return { text: "too late", delayMs: 60_000 };
  return { text: `You said: ${text}` };
};

let harness: ProtocolsGateway;
let antler: AntlerClient;
let gateway: RunningGateway;
let alice: Client;
let bob: Client;

beforeAll(async () => {
  harness = await startProtocolsGateway({ prefix: "antler-langgraph-threads-", script });
  ({ client: antler, gateway } = harness);
  alice = new Client({ apiUrl: `${gateway.url}/langgraph`, apiKey: ALICE });
  bob = new Client({ apiUrl: `${gateway.url}/langgraph`, apiKey: BOB });
  await antler.saveAgent("helper", { soul: "You help.", description: "A helper." }, { userId: "alice" });
});

afterAll(async () => {
  await harness?.close();
});

/** A thread of Alice's with a real run on it (through the runtime the gateway serves). */
async function seeded(threadId: string, metadata: Record<string, unknown> = {}, text = "hello") {
  await alice.threads.create({ threadId, metadata });
  await antler.invoke(text, { threadId, userId: "alice" });
}

type HttpError = Error & { status: number; text: string; response: Response };

/** The SDK's error for a call that must fail: status, LangGraph's body, and the trace id header. */
async function failure(
  call: Promise<unknown>,
): Promise<{ status: number; body: { detail: string; error: { code: string; message: string; where?: string } }; traceId: string | null }> {
  const error = (await call.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => e,
  )) as HttpError;
  expect(error.status).toBeTypeOf("number");
  return { status: error.status, body: JSON.parse(error.text), traceId: error.response.headers.get("x-trace-id") };
}

describe("LangGraph assistants", () => {
  it("lists the lead agent and the user's custom agents, counts them, and gets each by id", async () => {
    const all = await alice.assistants.search();
    expect(all.map((a) => a.assistant_id)).toEqual(["agent", "helper"]);
    expect(all[1]).toMatchObject({ graph_id: "agent", name: "helper", description: "A helper.", context: { agent_name: "helper" } });
    expect(await alice.assistants.search({ metadata: { antler_agent: "helper" } })).toHaveLength(1);
    expect(await alice.assistants.search({ limit: 1, offset: 1 })).toMatchObject([{ assistant_id: "helper" }]);
    expect(await alice.assistants.count()).toBe(2);
    expect(await alice.assistants.count({ graphId: "agent" })).toBe(2);
    expect(await bob.assistants.count()).toBe(1);
    expect(await alice.assistants.get("agent")).toMatchObject({ assistant_id: "agent", graph_id: "agent" });
    expect(await alice.assistants.get("helper")).toMatchObject({
      assistant_id: "helper",
      config: { configurable: { agent_name: "helper" } },
    });
    // DeerFlow's front end names the lead agent's graph lead_agent.
    expect(await alice.assistants.get("lead_agent")).toMatchObject({ graph_id: "agent" });
  });

  it("draws the agent's real graph, describes its schemas, and has no subgraphs", async () => {
    const graph = await alice.assistants.getGraph("helper");
    const nodes = graph.nodes.map((n) => String(n.id));
    expect(nodes).toContain("__start__");
    expect(nodes).toContain("model_request");
    expect(nodes).toContain("__end__");
    expect(graph.edges.length).toBeGreaterThan(1);
    const schemas = await alice.assistants.getSchemas("agent");
    expect(schemas.graph_id).toBe("agent");
    expect(Object.keys((schemas.state_schema as { properties: object }).properties)).toEqual(
      expect.arrayContaining(["messages", "title", "todos", "artifacts"]),
    );
    expect((schemas.context_schema as { properties: object }).properties).toHaveProperty("thinking_enabled");
    expect((schemas.context_schema as { properties: object }).properties).toHaveProperty("reasoning_effort.enum", [
      "minimal",
      "low",
      "medium",
      "high",
    ]);
    expect(await alice.assistants.getSubgraphs("agent")).toEqual({});
  });

  it("answers 404 in LangGraph's shape for an unknown assistant and for another user's agent, and refuses writes with 405", async () => {
    for (const call of [
      () => alice.assistants.get("nobody"),
      () => bob.assistants.get("helper"),
      () => bob.assistants.getGraph("helper"),
    ]) {
      const { status, body, traceId } = await failure(call());
      expect(status).toBe(404);
      expect(body).toMatchObject({ error: { code: "ANTLER_ERR_LANGGRAPH_ASSISTANT_NOT_FOUND" } });
      expect(body.detail).toMatch(/not found/);
      expect(traceId).toBeTruthy();
    }
    const refused = await failure(alice.assistants.create({ graphId: "agent" }));
    expect(refused.status).toBe(405);
    expect(refused.body.error.code).toBe("ANTLER_ERR_LANGGRAPH_UNSUPPORTED");
  });
});

describe("LangGraph threads", () => {
  it("creates a thread with an id and metadata, honours if_exists, and gets it idle with no state", async () => {
    const created = await alice.threads.create({ threadId: "t-new", metadata: { project: "p1" } });
    expect(created).toMatchObject({ thread_id: "t-new", metadata: { project: "p1" }, status: "idle", values: {}, interrupts: {} });
    expect(await alice.threads.create({ threadId: "t-new", ifExists: "do_nothing" })).toMatchObject({ thread_id: "t-new" });
    const conflict = await failure(alice.threads.create({ threadId: "t-new", ifExists: "raise" }));
    expect(conflict.status).toBe(409);
    expect(conflict.traceId).toBeTruthy();
    const fresh = await alice.threads.create();
    expect(fresh.thread_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await alice.threads.get("t-new")).toMatchObject({ thread_id: "t-new", status: "idle" });
  });

  it("gets a run thread's values as LangGraph messages, its state, and its checkpoint history newest first", async () => {
    await seeded("t-run");
    const thread = await alice.threads.get<{ messages: Array<{ type: string; content: string }> }>("t-run");
    expect(thread.status).toBe("idle");
    expect(thread.values.messages.map((m) => `${m.type}: ${m.content}`)).toEqual(["human: hello", "ai: You said: hello"]);

    const state = await alice.threads.getState<{ messages: unknown[] }>("t-run");
    expect(state.values.messages).toHaveLength(2);
    expect(state.next).toEqual([]);
    expect(state.checkpoint.checkpoint_id).toBeTruthy();
    const onlyMessages = await alice.threads.getState("t-run", undefined, { select: ["values.messages"] });
    expect(Object.keys(onlyMessages)).toEqual(["values"]);

    const history = await alice.threads.getHistory<{ messages: unknown[] }>("t-run", { limit: 3 });
    expect(history).toHaveLength(3);
    expect(history[0]?.checkpoint.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
    expect(history[0]?.parent_checkpoint?.checkpoint_id).toBe(history[1]?.checkpoint.checkpoint_id);
    const older = await alice.threads.getHistory("t-run", {
      limit: 1,
      before: { configurable: { checkpoint_id: history[0]?.checkpoint.checkpoint_id } },
    });
    expect(older[0]?.checkpoint.checkpoint_id).toBe(history[1]?.checkpoint.checkpoint_id);

    const past = await alice.threads.getState<{ messages: unknown[] }>("t-run", history[1]?.checkpoint.checkpoint_id as string);
    expect(past.checkpoint.checkpoint_id).toBe(history[1]?.checkpoint.checkpoint_id);
    expect(past.values.messages).toEqual(history[1]?.values.messages);
  });

  it("updates state: appends a message as a node, and the thread reads it back", async () => {
    await seeded("t-update");
    const before = await alice.threads.getState("t-update");
    const { configurable: checkpoint } = await alice.threads.updateState("t-update", {
      values: { messages: [{ type: "ai", content: "An added note." }] },
      asNode: "model_request",
    });
    expect(checkpoint?.checkpoint_id).toBeTruthy();
    expect(checkpoint?.checkpoint_id).not.toBe(before.checkpoint.checkpoint_id);
    const thread = await alice.threads.get<{ messages: Array<{ content: string }> }>("t-update");
    expect(thread.values.messages.at(-1)?.content).toBe("An added note.");
    const [latest] = await alice.threads.getHistory("t-update", { limit: 1 });
    expect(latest?.metadata).toMatchObject({ source: "update" });

    const badKey = await failure(alice.threads.updateState("t-update", { values: { nonsense: 1 } }));
    expect(badKey.status).toBe(422);
    expect(badKey.body.error.where).toBe("values.nonsense");
    const badNode = await failure(alice.threads.updateState("t-update", { values: { title: "x" }, asNode: "no_such_node" }));
    expect(badNode.status).toBe(409);
  });

  it("searches by metadata, status, ids, limit and offset, sorts, and counts", async () => {
    await seeded("s-1", { team: "red" });
    await seeded("s-2", { team: "red" });
    await seeded("s-3", { team: "blue" });
    const red = await alice.threads.search({ metadata: { team: "red" }, sortBy: "thread_id", sortOrder: "asc" });
    expect(red.map((t) => t.thread_id)).toEqual(["s-1", "s-2"]);
    // A search carries the last message as a preview, never the whole thread.
    expect((red[0]?.values as { messages?: unknown[] } | undefined)?.messages).toHaveLength(1);
    expect(
      (await alice.threads.search({ metadata: { team: "red" }, sortBy: "thread_id", sortOrder: "asc", limit: 1, offset: 1 })).map(
        (t) => t.thread_id,
      ),
    ).toEqual(["s-2"]);
    expect((await alice.threads.search({ ids: ["s-3", "t-none"] })).map((t) => t.thread_id)).toEqual(["s-3"]);
    expect(await alice.threads.count({ metadata: { team: "red" } })).toBe(2);
    expect(await bob.threads.count({ metadata: { team: "red" } })).toBe(0);
    const idle = await alice.threads.search({ status: "idle", metadata: { team: "blue" } });
    expect(idle.map((t) => t.thread_id)).toEqual(["s-3"]);
    expect(await alice.threads.search({ status: "busy", metadata: { team: "blue" } })).toEqual([]);
    const selected = await alice.threads.search({ ids: ["s-3"], select: ["thread_id", "status"] });
    expect(selected).toEqual([{ thread_id: "s-3", status: "idle" }]);
  });

  it("reports a thread whose run ended on ask_clarification as interrupted, with the question as its interrupt", async () => {
    await seeded("t-ask", {}, "ask me something");
    const thread = await alice.threads.get("t-ask");
    expect(thread.status).toBe("interrupted");
    const interrupts = Object.values(thread.interrupts).flat();
    expect(interrupts).toEqual([
      { id: "call-ask", value: expect.objectContaining({ question: "Which city?", options: ["Oslo", "Rome"], kind: "choice" }) },
    ]);
    expect((await alice.threads.search({ status: "interrupted" })).map((t) => t.thread_id)).toContain("t-ask");
  });

  it("reports a thread busy while its run runs, refuses to copy or update its state meanwhile, and idle once it is cancelled", async () => {
    await alice.threads.create({ threadId: "t-busy" });
    const stop = new AbortController();
    let admitted: () => void = () => {};
    const running = new Promise<void>((resolve) => (admitted = resolve));
    const events = antler.stream("wait for it", { threadId: "t-busy", userId: "alice", signal: stop.signal, onAdmitted: () => admitted() });
    const consumed = (async () => {
      for await (const _ of events);
    })().catch(() => undefined);
    await running;
    expect((await alice.threads.get("t-busy")).status).toBe("busy");
    expect((await alice.threads.search({ status: "busy" })).map((t) => t.thread_id)).toEqual(["t-busy"]);
    expect((await failure(alice.threads.copy("t-busy"))).body.error.code).toBe("ANTLER_ERR_THREAD_BUSY");
    expect((await failure(alice.threads.updateState("t-busy", { values: { title: "x" } }))).status).toBe(409);
    stop.abort();
    await consumed;
    expect((await alice.threads.get("t-busy")).status).toBe("idle");
  });

  it("updates metadata (merged), copies a thread with its messages, and deletes it", async () => {
    await seeded("t-copy", { keep: 1, drop: 2 });
    const updated = await alice.threads.update("t-copy", { metadata: { drop: null, added: true } });
    expect(updated.metadata).toEqual({ keep: 1, added: true });
    const copy = await alice.threads.copy("t-copy");
    expect(copy.thread_id).not.toBe("t-copy");
    expect(copy.metadata).toEqual({ keep: 1, added: true });
    const original = await alice.threads.get("t-copy");
    expect(copy.values).toEqual(original.values);
    await alice.threads.delete("t-copy");
    expect((await failure(alice.threads.get("t-copy"))).status).toBe(404);
    expect((await alice.threads.get(copy.thread_id)).values).toEqual(original.values);
  });

  it("answers 404 for an unknown thread and for another user's, in LangGraph's shape with X-Trace-Id", async () => {
    await seeded("t-alice");
    const calls = [
      () => alice.threads.get("t-never"),
      () => bob.threads.get("t-alice"),
      () => bob.threads.getState("t-alice"),
      () => bob.threads.getHistory("t-alice"),
      () => bob.threads.update("t-alice", { metadata: { x: 1 } }),
      () => bob.threads.copy("t-alice"),
      () => bob.threads.delete("t-alice"),
      () => bob.threads.updateState("t-alice", { values: { title: "mine" } }),
    ];
    for (const call of calls) {
      const { status, body, traceId } = await failure(call());
      expect(status).toBe(404);
      expect(body.error.code).toBe("ANTLER_ERR_THREAD_NOT_FOUND");
      expect(body.detail).toBeTruthy();
      expect(traceId).toBeTruthy();
    }
    expect((await alice.threads.get("t-alice")).metadata).toEqual({});
    const missingCheckpoint = await failure(alice.threads.getState("t-alice", "no-such-checkpoint"));
    expect(missingCheckpoint.status).toBe(404);
  });

  it("answers 422 naming the field for a body that does not validate, with X-Trace-Id", async () => {
    const post = (path: string, body: unknown, key = ALICE) =>
      fetch(`${gateway.url}/langgraph${path}`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    for (const [path, body, where] of [
      ["/threads/search", { limit: "ten" }, "limit"],
      ["/threads", { if_exists: "overwrite" }, "if_exists"],
      ["/threads", { metadata: "not an object" }, "metadata"],
      ["/assistants/search", { sort_by: "colour" }, "sort_by"],
      ["/threads/search", { values: { title: "x" } }, "values"],
    ] as const) {
      const response = await post(path, body);
      expect(response.status).toBe(422);
      expect(response.headers.get("x-trace-id")).toBeTruthy();
      expect(await response.json()).toMatchObject({
        detail: expect.stringContaining(where),
        error: { code: "ANTLER_ERR_LANGGRAPH_INVALID_REQUEST", where, message: expect.stringContaining(where) },
      });
    }
    // Bearer works as well as x-api-key.
    const bearer = await fetch(`${gateway.url}/langgraph/assistants/agent`, { headers: { authorization: `Bearer ${BOB}` } });
    expect(bearer.status).toBe(200);
  });
});
