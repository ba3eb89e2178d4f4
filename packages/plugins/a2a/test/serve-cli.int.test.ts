// The A2A server under a real `antler serve` (the compiled CLI in a child process, SQLite storage, an
// OpenAI-compatible model server on loopback), driven by the official @a2a-js/sdk client.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Role, type StreamResponse, TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { RequestMalformedError, TaskNotFoundError } from "@a2a-js/sdk/errors";
import {
  type AntlerServe,
  antlerCliBuilt,
  loopbackModelConfig,
  type OpenAICompatibleServer,
  startAntlerServe,
  startOpenAICompatibleServer,
} from "@antler/kernel/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
const dists = {
  a2a: resolve(here, "../dist/index.js"),
  gateway: resolve(here, "../../gateway/dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
};
const built = Object.values(dists).every((p) => existsSync(p)) && antlerCliBuilt();
const ALICE_KEY = "alice-key-0123456789abcdef";
const TRACE_ID = "a2a-serve-trace-0001";

describe.skipIf(!built)("A2A under `antler serve` (compiled CLI in a child process; needs a build first)", () => {
  let dir: string;
  let model: OpenAICompatibleServer;
  let serve: AntlerServe;
  let url: string;

  beforeAll(async () => {
    model = await startOpenAICompatibleServer({
      handler: (body) => {
        const last = body.messages.at(-1);
        const text = typeof last?.content === "string" ? last.content : "";
        return { text: `You said: ${text}` };
      },
    });
    dir = mkdtempSync(join(tmpdir(), "antler-a2a-serve-"));
    writeFileSync(
      join(dir, "config.yaml"),
      [
        ...loopbackModelConfig(model.url),
        "plugins:",
        `  - path: ${JSON.stringify(dists.openai)}`,
        `  - path: ${JSON.stringify(dists.gateway)}`,
        "    config:",
        "      auth:",
        "        api_keys:",
        "          - { key: $ALICE_KEY, user: alice }",
        `  - path: ${JSON.stringify(dists.a2a)}`,
        "    config:",
        "      server:",
        "        name: Serve test agent",
        "",
      ].join("\n"),
    );
    serve = await startAntlerServe({ cwd: dir, env: { ALICE_KEY } });
    url = serve.url;
  }, 90_000);

  afterAll(async () => {
    await serve?.stop();
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("resolves the card, streams a task to completed under the caller's trace id, and reads it back with GetTask", async () => {
    const keyed: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${ALICE_KEY}`);
      headers.set("x-trace-id", TRACE_ID);
      return fetch(input, { ...init, headers });
    };
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl: keyed })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }),
      }),
    );
    const client = await factory.createFromUrl(url);
    const message = {
      messageId: crypto.randomUUID(),
      contextId: "",
      taskId: "",
      role: Role.ROLE_USER,
      parts: [
        { content: { $case: "text" as const, value: "hello from a peer" }, metadata: undefined, filename: "", mediaType: "text/plain" },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream({ tenant: "", message, configuration: undefined, metadata: undefined }))
      events.push(event);
    const first = events[0]?.payload;
    if (first?.$case !== "task") throw new Error("the stream did not start with a task");
    const last = events.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" ? last.value.status?.state : undefined).toBe(TaskState.TASK_STATE_COMPLETED);
    const task = await client.getTask({ tenant: "", id: first.value.id });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.metadata?.trace_id).toBe(TRACE_ID);
    const answer = task.artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === "text" ? p.content.value : ""));
    expect(answer.join("")).toBe("You said: hello from a peer");
    // The run record on the Antler side carries the same trace id.
    const runs = await fetch(`${url}/api/threads/${task.contextId}/runs`, { headers: { authorization: `Bearer ${ALICE_KEY}` } });
    const [run] = ((await runs.json()) as { runs: Array<{ trace_id: string; status: string }> }).runs;
    expect(run).toMatchObject({ trace_id: TRACE_ID, status: "success" });
    await expect(client.getTask({ tenant: "", id: crypto.randomUUID() })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it("refuses a push webhook on a private or loopback address when push.allow_private_addresses is off (the default), and starts nothing", async () => {
    const keyed: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${ALICE_KEY}`);
      return fetch(input, { ...init, headers });
    };
    const client = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl: keyed })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }),
      }),
    ).createFromUrl(url);
    const message = {
      messageId: crypto.randomUUID(),
      contextId: "",
      taskId: "",
      role: Role.ROLE_USER,
      parts: [{ content: { $case: "text" as const, value: "push me" }, metadata: undefined, filename: "", mediaType: "text/plain" }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    const requestsBefore = model.requests.length;
    const withHook = (hook: string) =>
      client.sendMessage({
        tenant: "",
        message: { ...message, messageId: crypto.randomUUID() },
        configuration: {
          acceptedOutputModes: [],
          returnImmediately: false,
          taskPushNotificationConfig: { tenant: "", id: "", taskId: "", url: hook, token: "", authentication: undefined },
        },
        metadata: undefined,
      });
    await expect(withHook("http://127.0.0.1:9/hook")).rejects.toThrow(
      /push notification URL refused: host 127\.0\.0\.1 is a loopback address/,
    );
    await expect(withHook("http://10.1.2.3/hook")).rejects.toBeInstanceOf(RequestMalformedError);
    expect(model.requests.length).toBe(requestsBefore);
    // On a task that exists, CreateTaskPushNotificationConfig refuses it the same way.
    const task = await client.sendMessage({ tenant: "", message, configuration: undefined, metadata: undefined });
    if (!("status" in task)) throw new Error("expected a task");
    await expect(
      client.createTaskPushNotificationConfig({
        tenant: "",
        id: "",
        taskId: task.id,
        url: "http://192.168.1.10/hook",
        token: "",
        authentication: undefined,
      }),
    ).rejects.toThrow(/push notification URL refused: host 192\.168\.1\.10 is a private address/);
    expect((await client.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" })).configs).toEqual([]);
  });
});
