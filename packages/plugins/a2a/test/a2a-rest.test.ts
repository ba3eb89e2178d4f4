// The A2A HTTP+JSON (REST) binding, driven by the official @a2a-js/sdk client configured with its REST transport
// only: the same tasks, errors and push configs as over JSON-RPC.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Message, Role, type StreamResponse, TaskState } from "@a2a-js/sdk";
import { type Client, ClientFactory, DefaultAgentCardResolver, RestTransportFactory } from "@a2a-js/sdk/client";
import { RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import a2a from "../src/index.js";

const KEY = "rest-key-0123456789abcdef0";

const script = (messages: BaseMessage[]) => {
  const last = messages[messages.length - 1];
  if (last instanceof ToolMessage) return { text: "Done with the tool." };
  if (last instanceof AIMessage) return { text: "?" };
  const text = String(messages.filter((m) => m.getType() === "human").at(-1)?.content ?? "");
  if (text.includes("ask me")) {
    return {
      toolCalls: [{ id: "call-ask", name: "ask_clarification", args: { question: "Which size?", clarification_type: "missing_info" } }],
    };
  }
  if (text.includes("sleep long")) return { text: "late", delayMs: 60_000 };
  return { text: `You said: ${text}` };
};

let dir: string;
let antler: AntlerClient;
let gateway: RunningGateway;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "antler-a2a-rest-"));
  antler = await AntlerClient.create({
    config: {
      base_dir: dir,
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "sqlite" },
      title: { enabled: false },
      logging: { level: "warn" },
    },
    plugins: [scriptedModelsPlugin({ m: { respond: script } }), { plugin: a2a, config: { push: { allow_private_addresses: true } } }],
    cwd: dir,
    env: {},
    discover: false,
  });
  gateway = await startGateway({
    client: antler,
    config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: KEY, user: "alice" }] } },
    shutdownGraceMs: 500,
  });
});

afterAll(async () => {
  await gateway?.close();
  await antler?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The SDK client with only its HTTP+JSON transport, so it must take the card's REST interface. */
async function restClient(key = KEY): Promise<Client> {
  const keyed: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };
  return new ClientFactory({
    transports: [new RestTransportFactory({ fetchImpl: keyed })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }),
  }).createFromUrl(gateway.url);
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

async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

const finalState = (events: StreamResponse[]) => {
  const last = events.at(-1)?.payload;
  return last?.$case === "statusUpdate" ? last.value.status?.state : undefined;
};

describe("A2A over HTTP+JSON (REST)", () => {
  it("lists the HTTP+JSON interface on the card after JSON-RPC, and the SDK's REST transport takes it", async () => {
    const card = (await (await fetch(`${gateway.url}/.well-known/agent-card.json`)).json()) as { supportedInterfaces: unknown[] };
    expect(card.supportedInterfaces).toEqual([
      expect.objectContaining({ url: `${gateway.url}/a2a`, protocolBinding: "JSONRPC" }),
      expect.objectContaining({ url: `${gateway.url}/a2a/rest`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" }),
    ]);
    expect((await restClient()).transport.protocolName).toBe("HTTP+JSON");
  });

  it("sends, streams in chunks and reads a task back", async () => {
    const client = await restClient();
    const sent = await client.sendMessage({
      tenant: "",
      message: userMessage("hello rest"),
      configuration: undefined,
      metadata: undefined,
    });
    if (!("status" in sent)) throw new Error("expected a task");
    expect(sent.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const read = await client.getTask({ tenant: "", id: sent.id });
    const text = read.artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === "text" ? p.content.value : ""));
    expect(text.join("")).toBe("You said: hello rest");
    const events = await collect(
      client.sendMessageStream({ tenant: "", message: userMessage("stream these words"), configuration: undefined, metadata: undefined }),
    );
    expect(events[0]?.payload?.$case).toBe("task");
    expect(events.filter((e) => e.payload?.$case === "artifactUpdate").length).toBeGreaterThan(1);
    expect(finalState(events)).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("pauses as input-required and a follow-up on the same task completes it", async () => {
    const client = await restClient();
    const first = await collect(
      client.sendMessageStream({ tenant: "", message: userMessage("please ask me"), configuration: undefined, metadata: undefined }),
    );
    expect(finalState(first)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const task = first[0]?.payload?.$case === "task" ? first[0].payload.value : undefined;
    if (!task) throw new Error("no task");
    const answer = await collect(
      client.sendMessageStream({
        tenant: "",
        message: userMessage("large", { taskId: task.id, contextId: task.contextId }),
        configuration: undefined,
        metadata: undefined,
      }),
    );
    expect(finalState(answer)).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("cancels a running task, resubscribes to one, and manages push configs", async () => {
    const client = await restClient();
    const started = await client.sendMessage({
      tenant: "",
      message: userMessage("sleep long"),
      configuration: { acceptedOutputModes: [], returnImmediately: true, taskPushNotificationConfig: undefined },
      metadata: undefined,
    });
    if (!("status" in started)) throw new Error("expected a task");
    const resumed = client.resubscribeTask({ tenant: "", id: started.id });
    expect((await resumed.next()).value?.payload?.$case).toBe("task");
    const config = await client.createTaskPushNotificationConfig({
      tenant: "",
      id: "hook-1",
      taskId: started.id,
      url: "http://127.0.0.1:9/a2a",
      token: "tok",
      authentication: undefined,
    });
    expect(config).toMatchObject({ id: "hook-1", taskId: started.id, url: "http://127.0.0.1:9/a2a", token: "tok" });
    expect(
      (await client.listTaskPushNotificationConfig({ tenant: "", taskId: started.id, pageSize: 0, pageToken: "" })).configs,
    ).toHaveLength(1);
    await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: started.id, id: "hook-1" });
    await expect(
      client.createTaskPushNotificationConfig({
        tenant: "",
        id: "",
        taskId: started.id,
        url: "http://169.254.169.254/x",
        token: "",
        authentication: undefined,
      }),
    ).rejects.toBeInstanceOf(RequestMalformedError);
    const cancelled = await client.cancelTask({ tenant: "", id: started.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const rest: StreamResponse[] = [];
    for await (const event of resumed) rest.push(event);
    expect(finalState(rest)).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(
      client.sendMessage({
        tenant: "",
        message: userMessage("go on", { taskId: started.id }),
        configuration: undefined,
        metadata: undefined,
      }),
    ).rejects.toBeInstanceOf(UnsupportedOperationError);
  });

  it("answers an unknown task with TaskNotFoundError, an unknown path with 404 and a wrong key with 401", async () => {
    const client = await restClient();
    await expect(client.getTask({ tenant: "", id: crypto.randomUUID() })).rejects.toBeInstanceOf(TaskNotFoundError);
    const unknown = await fetch(`${gateway.url}/a2a/rest/nothing-here`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { status: string } }).error.status).toBe("NOT_FOUND");
    const wrong = await fetch(`${gateway.url}/a2a/rest/tasks/x`, { headers: { authorization: "Bearer wrong-key-0123456789abcdef" } });
    expect(wrong.status).toBe(401);
  });
});
