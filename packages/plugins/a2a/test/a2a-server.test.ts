// The A2A server against the official @a2a-js/sdk client: a real gateway on loopback, SQLite storage, a scripted
// model. Every call goes through the SDK's card resolver and JSON-RPC transport, as a remote agent's would.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Message, Role, type SendMessageRequest, type StreamResponse, TaskState } from "@a2a-js/sdk";
import { type Client, ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import a2a from "../src/index.js";

const ALICE = "alice-key-0123456789abcdef";
const BOB = "bob-key-0123456789abcdef01";

function lastHuman(messages: BaseMessage[]): string {
  const human = messages.filter((m) => m.getType() === "human").at(-1);
  return typeof human?.content === "string" ? human.content : "";
}

/** A question for "ask me", a long wait for "sleep long", several words of text otherwise. */
const script = (messages: BaseMessage[]) => {
  const last = messages[messages.length - 1];
  if (last instanceof ToolMessage) return { text: "Done with the tool." };
  if (last instanceof AIMessage) return { text: "?" };
  const text = lastHuman(messages);
  if (text.includes("ask me")) {
    return {
      toolCalls: [
        {
          id: "call-ask",
          name: "ask_clarification",
          args: { question: "Which colour?", clarification_type: "approach_choice", options: ["red", "blue"] },
        },
      ],
    };
  }
  if (text.includes("sleep long")) return { text: "too late", delayMs: 60_000 };
  return { text: `You said: ${text}` };
};

let dir: string;
let antler: AntlerClient;
let gateway: RunningGateway;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "antler-a2a-"));
  antler = await AntlerClient.create({
    config: {
      base_dir: dir,
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "sqlite" },
      title: { enabled: false },
      logging: { level: "warn" },
    },
    plugins: [scriptedModelsPlugin({ m: { respond: script } }), a2a],
    cwd: dir,
    env: {},
    discover: false,
  });
  gateway = await startGateway({
    client: antler,
    config: {
      port: 0,
      max_json_bytes: 64 * 1024,
      auth: {
        mode: "api_keys",
        api_keys: [
          { key: ALICE, user: "alice" },
          { key: BOB, user: "bob" },
        ],
      },
    },
    shutdownGraceMs: 500,
  });
});

afterAll(async () => {
  await gateway?.close();
  await antler?.close();
  rmSync(dir, { recursive: true, force: true });
});

function keyedFetch(key: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };
}

/** The SDK's client from the gateway's card, sending `key` on every call. */
async function a2aClient(key = ALICE): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: keyedFetch(key) })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }),
    }),
  );
  return factory.createFromUrl(gateway.url);
}

function userMessage(text: string, extra: Partial<Message> = {}): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}

function request(message: Message, metadata?: Record<string, unknown>): SendMessageRequest {
  return { tenant: "", message, configuration: undefined, metadata };
}

async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

function finalState(events: StreamResponse[]): TaskState | undefined {
  const last = events.at(-1)?.payload;
  return last?.$case === "statusUpdate" ? last.value.status?.state : undefined;
}

function answerText(events: StreamResponse[]): string {
  return events
    .map((e) =>
      e.payload?.$case === "artifactUpdate"
        ? e.payload.value.artifact?.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("")
        : "",
    )
    .join("");
}

function taskIdOf(events: StreamResponse[]): string {
  const first = events[0]?.payload;
  if (first?.$case !== "task") throw new Error(`the stream did not start with a task: ${JSON.stringify(first)}`);
  return first.value.id;
}

describe("A2A server on the gateway", () => {
  it("serves a public agent card naming the JSON-RPC endpoint, the lead agent skill and the API-key schemes", async () => {
    const response = await fetch(`${gateway.url}/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    const card = (await response.json()) as Record<string, unknown>;
    expect(card.supportedInterfaces).toEqual([
      expect.objectContaining({ url: `${gateway.url}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }),
      expect.objectContaining({ url: `${gateway.url}/a2a/rest`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" }),
    ]);
    expect((card.skills as Array<{ id: string }>).map((s) => s.id)).toEqual(["lead"]);
    expect(Object.keys(card.securitySchemes as object).sort()).toEqual(["apiKey", "bearer"]);
    expect(card.capabilities).toMatchObject({ streaming: true });
  });

  it("answers SendMessage with a completed task whose artifact is the run's answer, and GetTask reads it back", async () => {
    const client = await a2aClient();
    const result = await client.sendMessage(request(userMessage("hello there")));
    if (!("status" in result)) throw new Error("expected a task");
    expect(result.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const text = result.artifacts
      .flatMap((a) => a.parts)
      .map((p) => (p.content?.$case === "text" ? p.content.value : ""))
      .join("");
    expect(text).toBe("You said: hello there");
    const read = await client.getTask({ tenant: "", id: result.id });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(read.contextId).toBe(result.contextId);
    expect(
      read.artifacts
        .flatMap((a) => a.parts)
        .map((p) => (p.content?.$case === "text" ? p.content.value : ""))
        .join(""),
    ).toBe("You said: hello there");
  });

  it("streams SendStreamingMessage as a task, then the answer in several appended chunks, then completed", async () => {
    const client = await a2aClient();
    const events = await collect(client.sendMessageStream(request(userMessage("stream these several words please"))));
    expect(events[0]?.payload?.$case).toBe("task");
    const chunks = events.filter((e) => e.payload?.$case === "artifactUpdate");
    expect(chunks.length).toBeGreaterThan(1);
    expect(answerText(events)).toBe("You said: stream these several words please");
    expect(finalState(events)).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("pauses as input-required on ask_clarification, and a follow-up on the same task completes it on the same context", async () => {
    const client = await a2aClient();
    const first = await collect(client.sendMessageStream(request(userMessage("please ask me something"))));
    const taskId = taskIdOf(first);
    expect(finalState(first)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const paused = await client.getTask({ tenant: "", id: taskId });
    expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const question = paused.status?.message?.parts[0]?.content;
    expect(question?.$case === "text" ? question.value : "").toContain("Which colour?");
    const answer = await collect(client.sendMessageStream(request(userMessage("blue", { taskId, contextId: paused.contextId }))));
    expect(taskIdOf(answer)).toBe(taskId);
    expect(finalState(answer)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(answer)).toBe("You said: blue");
    const done = await client.getTask({ tenant: "", id: taskId });
    expect(done).toMatchObject({ id: taskId, contextId: paused.contextId });
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("cancels a running task; it reads back canceled and a follow-up on it is refused", async () => {
    const client = await a2aClient();
    const result = await client.sendMessage({
      ...request(userMessage("sleep long")),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
    });
    if (!("status" in result)) throw new Error("expected a task");
    expect(result.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const cancelled = await client.cancelTask({ tenant: "", id: result.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await client.getTask({ tenant: "", id: result.id })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(client.sendMessage(request(userMessage("go on", { taskId: result.id })))).rejects.toBeInstanceOf(
      UnsupportedOperationError,
    );
  });

  it("resubscribes to a running task after the first stream was dropped, and sees it to the end", async () => {
    const client = await a2aClient();
    const dropped = new AbortController();
    const stream = client.sendMessageStream(request(userMessage("sleep long")), { signal: dropped.signal });
    const first = await stream.next();
    const taskId = first.value?.payload?.$case === "task" ? first.value.payload.value.id : "";
    expect(taskId).not.toBe("");
    dropped.abort();
    await stream.return(undefined).catch(() => undefined);
    expect((await client.getTask({ tenant: "", id: taskId })).status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const resumed = client.resubscribeTask({ tenant: "", id: taskId });
    const snapshot = await resumed.next();
    expect(snapshot.value?.payload?.$case).toBe("task");
    // Ends the task from elsewhere: the resubscribed stream sees its end.
    await client.cancelTask({ tenant: "", id: taskId, metadata: undefined });
    const rest: StreamResponse[] = [];
    for await (const event of resumed) rest.push(event);
    expect(finalState(rest)).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it("answers an unknown task id, and another user's task, with TaskNotFoundError", async () => {
    const client = await a2aClient();
    await expect(client.getTask({ tenant: "", id: crypto.randomUUID() })).rejects.toBeInstanceOf(TaskNotFoundError);
    const result = await client.sendMessage(request(userMessage("mine")));
    if (!("status" in result)) throw new Error("expected a task");
    const bob = await a2aClient(BOB);
    await expect(bob.getTask({ tenant: "", id: result.id })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it("refuses a loopback push-notification webhook (push.allow_private_addresses is off by default) with a clear invalid-params error", async () => {
    const client = await a2aClient();
    const result = await client.sendMessage(request(userMessage("hook me")));
    if (!("status" in result)) throw new Error("expected a task");
    const create = client.createTaskPushNotificationConfig({
      tenant: "",
      id: "",
      taskId: result.id,
      url: `${gateway.url}/hook`,
      token: "",
      authentication: undefined,
    });
    await expect(create).rejects.toBeInstanceOf(RequestMalformedError);
    await expect(
      client.createTaskPushNotificationConfig({
        tenant: "",
        id: "",
        taskId: result.id,
        url: "http://localhost:9/hook",
        token: "",
        authentication: undefined,
      }),
    ).rejects.toThrow(
      /push notification URL refused: host localhost is a loopback name\. A webhook must be an http\(s\) URL on a public address/,
    );
    expect((await client.listTaskPushNotificationConfig({ tenant: "", taskId: result.id, pageSize: 0, pageToken: "" })).configs).toEqual(
      [],
    );
  });

  it("refuses an unknown skill with invalid params, and starts no task", async () => {
    const client = await a2aClient();
    await expect(client.sendMessage(request(userMessage("hi"), { skill: "no-such-agent" }))).rejects.toBeInstanceOf(RequestMalformedError);
  });

  it("refuses a wrong API key with 401 and an oversized message with 413, before any task", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } });
    const wrong = await fetch(`${gateway.url}/a2a`, {
      method: "POST",
      headers: { authorization: "Bearer wrong-key-0123456789abcd", "content-type": "application/json" },
      body,
    });
    expect(wrong.status).toBe(401);
    const client = await a2aClient("wrong-key-0123456789abcd");
    await expect(client.getTask({ tenant: "", id: "x" })).rejects.toThrow();
    const huge = await fetch(`${gateway.url}/a2a`, {
      method: "POST",
      headers: { authorization: `Bearer ${ALICE}`, "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "SendMessage",
        params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x".repeat(100_000) }] } },
      }),
    });
    expect(huge.status).toBe(413);
  });
});
