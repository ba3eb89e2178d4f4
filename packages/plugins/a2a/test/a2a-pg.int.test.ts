// The A2A tables on PostgreSQL: a remote question asked through one Antler instance is answered through another
// on the same database (the remote session is stored, not held in memory), and push configs live in PostgreSQL.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Role, TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { describeWithPostgres, scriptedModelsPlugin, usePostgresSchema } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient, type StreamEvent } from "@antler/plugin-runtime";
import postgres from "@antler/plugin-storage-postgres";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { afterEach, expect, it } from "vitest";
import a2a, { A2A_EVENT, INVOKE_A2A_AGENT_TOOL } from "../src/index.js";

const KEY = "pg-remote-key-0123456789abcd";
const KEY_ENV = "ANTLER_TEST_A2A_PG_KEY";

const lastHuman = (messages: BaseMessage[]) => String(messages.filter((m) => m.getType() === "human").at(-1)?.content ?? "");

describeWithPostgres("A2A tables on PostgreSQL", (url) => {
  const remoteSchema = usePostgresSchema(url, { prefix: "antler_a2a_remote" });
  const localSchema = usePostgresSchema(url, { prefix: "antler_a2a_local" });
  const cleanups: Array<() => Promise<void>> = [];

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    delete process.env[KEY_ENV];
  });

  async function client(
    storageSchema: string,
    respond: (m: BaseMessage[]) => object,
    extra: Record<string, unknown> = {},
    pluginConfig = {},
  ) {
    const dir = mkdtempSync(join(tmpdir(), "antler-a2a-pg-"));
    const antler = await AntlerClient.create({
      config: {
        base_dir: dir,
        models: [{ name: "m", provider: "scripted" }],
        storage: { backend: "postgres", postgres_url: url, postgres_schema: storageSchema },
        title: { enabled: false },
        logging: { level: "warn" },
        ...extra,
      },
      plugins: [postgres, scriptedModelsPlugin({ m: { respond } }), { plugin: a2a, config: pluginConfig }],
      cwd: dir,
      env: {},
      discover: false,
    });
    cleanups.push(async () => {
      await antler.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return antler;
  }

  async function remoteGateway(): Promise<RunningGateway> {
    const remote = await client(
      remoteSchema.name,
      (messages) => {
        const last = messages.at(-1);
        if (last instanceof ToolMessage) return { text: "Done." };
        const text = lastHuman(messages);
        if (text.includes("ask me")) {
          return {
            toolCalls: [{ id: "ask", name: "ask_clarification", args: { question: "Which colour?", clarification_type: "missing_info" } }],
          };
        }
        return text.includes("sleep long") ? { text: "late", delayMs: 60_000 } : { text: `You said: ${text}` };
      },
      {},
      { push: { allow_private_addresses: true } },
    );
    const gateway = await startGateway({
      client: remote,
      config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: KEY, user: "peer" }] } },
      shutdownGraceMs: 500,
    });
    cleanups.push(() => gateway.close());
    return gateway;
  }

  async function local(gatewayUrl: string) {
    return client(
      localSchema.name,
      (messages) => {
        const last = messages.at(-1);
        if (last instanceof ToolMessage) return { text: `Remote said: ${String(last.content)}` };
        return {
          toolCalls: [
            { id: `c-${crypto.randomUUID()}`, name: INVOKE_A2A_AGENT_TOOL, args: { agent: "desk", message: lastHuman(messages) } },
          ],
        };
      },
      {
        a2a_agents: [{ name: "desk", card_url: gatewayUrl, auth: { value_env: KEY_ENV }, allow_private_addresses: true }],
      },
    );
  }

  async function started(antler: AntlerClient, text: string, threadId?: string): Promise<{ taskId: string; threadId: string }> {
    const events: StreamEvent[] = [];
    for await (const event of antler.stream(text, threadId ? { threadId } : {})) events.push(event);
    const start = events.find((e) => e.type === "custom" && e.data.type === A2A_EVENT.started);
    const end = events.find((e) => e.type === "end");
    return {
      taskId: start?.type === "custom" ? String(start.data.task_id) : "",
      threadId: end?.type === "end" ? end.data.thread_id : "",
    };
  }

  it("answers a remote question through another instance on the same database: the same remote task goes on", async () => {
    process.env[KEY_ENV] = KEY;
    const gateway = await remoteGateway();
    const first = await local(gateway.url);
    const second = await local(gateway.url);
    const asked = await started(first, "please ask me something");
    expect(asked.taskId).not.toBe("");
    const answered = await started(second, "blue", asked.threadId);
    expect(answered.taskId).toBe(asked.taskId);
  });

  it("keeps push configs in PostgreSQL: create, list and delete with the SDK client", async () => {
    const gateway = await remoteGateway();
    const keyed: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${KEY}`);
      return fetch(input, { ...init, headers });
    };
    const sdk = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl: keyed })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }),
      }),
    ).createFromUrl(gateway.url);
    const task = await sdk.sendMessage({
      tenant: "",
      message: {
        messageId: crypto.randomUUID(),
        contextId: "",
        taskId: "",
        role: Role.ROLE_USER,
        parts: [{ content: { $case: "text", value: "sleep long" }, metadata: undefined, filename: "", mediaType: "text/plain" }],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: { acceptedOutputModes: [], returnImmediately: true, taskPushNotificationConfig: undefined },
      metadata: undefined,
    });
    if (!("status" in task)) throw new Error("expected a task");
    const config = { tenant: "", taskId: task.id, url: "http://127.0.0.1:9/hook", token: "t", authentication: undefined };
    await sdk.createTaskPushNotificationConfig({ ...config, id: "a" });
    await sdk.createTaskPushNotificationConfig({ ...config, id: "b" });
    await sdk.createTaskPushNotificationConfig({ ...config, id: "a", url: "http://127.0.0.1:9/replaced" });
    const listed = await sdk.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" });
    expect(listed.configs.map((c) => [c.id, c.url]).sort()).toEqual([
      ["a", "http://127.0.0.1:9/replaced"],
      ["b", "http://127.0.0.1:9/hook"],
    ]);
    await sdk.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "a" });
    await sdk.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "b" });
    expect((await sdk.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" })).configs).toEqual([]);
    expect((await sdk.cancelTask({ tenant: "", id: task.id, metadata: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });
});
