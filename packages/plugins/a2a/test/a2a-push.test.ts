// Push notifications of the A2A server, driven by the official @a2a-js/sdk client: a loopback webhook receives the
// task's state changes, each signed (HMAC-SHA256 of the body under the config's token) and retried when refused.
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Message, Role, StreamResponse, TaskState } from "@a2a-js/sdk";
import { type Client, ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { RequestMalformedError, TaskNotFoundError } from "@a2a-js/sdk/errors";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import type { BaseMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import a2a from "../src/index.js";

const KEY = "push-key-0123456789abcdef0";

interface Delivery {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  status: number;
}

/** A loopback webhook: records every delivery; `/flaky` answers 503 to the first two tries of each delivery id. */
async function startWebhook() {
  const deliveries: Delivery[] = [];
  const tries = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (p: Buffer) => parts.push(p));
    req.on("end", () => {
      const id = String(req.headers["x-a2a-notification-id"]);
      const n = (tries.get(id) ?? 0) + 1;
      tries.set(id, n);
      const status = req.url === "/flaky" && n <= 2 ? 503 : 200;
      deliveries.push({ path: req.url ?? "", headers: { ...req.headers }, body: Buffer.concat(parts).toString("utf8"), status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    deliveries,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let dir: string;
let antler: AntlerClient;
let gateway: RunningGateway;
let webhook: Awaited<ReturnType<typeof startWebhook>>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "antler-a2a-push-"));
  webhook = await startWebhook();
  antler = await AntlerClient.create({
    config: {
      base_dir: dir,
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "sqlite" },
      title: { enabled: false },
      logging: { level: "warn" },
    },
    plugins: [
      scriptedModelsPlugin({
        m: {
          respond: (messages: BaseMessage[]) => {
            const text = String(messages.filter((m) => m.getType() === "human").at(-1)?.content ?? "");
            return text.includes("sleep long") ? { text: "late", delayMs: 60_000 } : { text: `You said: ${text}` };
          },
        },
      }),
      { plugin: a2a, config: { push: { allow_private_addresses: true, initial_backoff_ms: 20 } } },
    ],
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
  await webhook?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function sdkClient(): Promise<Client> {
  const keyed: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${KEY}`);
    return fetch(input, { ...init, headers });
  };
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: keyed })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }),
    }),
  ).createFromUrl(gateway.url);
}

function userMessage(text: string): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The state each accepted delivery for `taskId` on `path` reports, decoded with the SDK. */
function statesOf(taskId: string, path: string): TaskState[] {
  return webhook.deliveries
    .filter((d) => d.path === path && d.status === 200)
    .map((d) => StreamResponse.fromJSON(JSON.parse(d.body)))
    .filter(
      (r) =>
        (r.payload?.$case === "task" ? r.payload.value.id : r.payload?.$case === "statusUpdate" ? r.payload.value.taskId : "") === taskId,
    )
    .map((r) =>
      r.payload?.$case === "task"
        ? r.payload.value.status?.state
        : r.payload?.$case === "statusUpdate"
          ? r.payload.value.status?.state
          : undefined,
    )
    .filter((s): s is TaskState => s !== undefined);
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

function expectSigned(d: Delivery, token: string): void {
  expect(d.headers["content-type"]).toBe("application/a2a+json");
  expect(d.headers["x-a2a-notification-token"]).toBe(token);
  expect(d.headers["x-a2a-notification-signature"]).toBe(`sha256=${createHmac("sha256", token).update(d.body).digest("hex")}`);
}

describe("A2A push notifications", () => {
  it("advertises pushNotifications on the card", async () => {
    const card = (await (await fetch(`${gateway.url}/.well-known/agent-card.json`)).json()) as { capabilities: Record<string, unknown> };
    expect(card.capabilities.pushNotifications).toBe(true);
  });

  it("delivers a task's state changes to the webhook given with SendMessage, signed with the client's token and traced", async () => {
    const client = await sdkClient();
    const result = await client.sendMessage({
      tenant: "",
      message: userMessage("hello hook"),
      configuration: {
        acceptedOutputModes: [],
        returnImmediately: false,
        taskPushNotificationConfig: {
          tenant: "",
          id: "",
          taskId: "",
          url: `${webhook.url}/hook`,
          token: "client-token-1",
          authentication: undefined,
        },
      },
      metadata: undefined,
    });
    if (!("status" in result)) throw new Error("expected a task");
    await until(() => statesOf(result.id, "/hook").includes(TaskState.TASK_STATE_COMPLETED), "the completed delivery");
    expect(statesOf(result.id, "/hook")).toEqual([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
    const task = await client.getTask({ tenant: "", id: result.id });
    for (const d of webhook.deliveries.filter((x) => x.path === "/hook")) {
      expectSigned(d, "client-token-1");
      expect(d.headers["x-trace-id"]).toBe(task.metadata?.trace_id);
    }
  });

  it("creates, gets, lists and deletes a config with the SDK client; a config without a token gets one, which signs the deliveries", async () => {
    const client = await sdkClient();
    const started = await client.sendMessage({
      tenant: "",
      message: userMessage("sleep long"),
      configuration: { acceptedOutputModes: [], returnImmediately: true, taskPushNotificationConfig: undefined },
      metadata: undefined,
    });
    if (!("status" in started)) throw new Error("expected a task");
    const created = await client.createTaskPushNotificationConfig({
      tenant: "",
      id: "",
      taskId: started.id,
      url: `${webhook.url}/managed`,
      token: "",
      authentication: { scheme: "Bearer", credentials: "webhook-secret" },
    });
    expect(created.id).not.toBe("");
    expect(created.token.length).toBeGreaterThanOrEqual(20);
    expect(await client.getTaskPushNotificationConfig({ tenant: "", taskId: started.id, id: created.id })).toMatchObject({
      id: created.id,
      url: `${webhook.url}/managed`,
      token: created.token,
    });
    const listed = await client.listTaskPushNotificationConfig({ tenant: "", taskId: started.id, pageSize: 0, pageToken: "" });
    expect(listed.configs.map((c) => c.id)).toEqual([created.id]);
    await client.cancelTask({ tenant: "", id: started.id, metadata: undefined });
    await until(() => statesOf(started.id, "/managed").includes(TaskState.TASK_STATE_CANCELED), "the canceled delivery");
    for (const d of webhook.deliveries.filter((x) => x.path === "/managed")) {
      expectSigned(d, created.token);
      expect(d.headers.authorization).toBe("Bearer webhook-secret");
    }
    await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: started.id, id: created.id });
    expect((await client.listTaskPushNotificationConfig({ tenant: "", taskId: started.id, pageSize: 0, pageToken: "" })).configs).toEqual(
      [],
    );
    await expect(client.getTaskPushNotificationConfig({ tenant: "", taskId: started.id, id: created.id })).rejects.toBeInstanceOf(
      TaskNotFoundError,
    );
    await expect(
      client.createTaskPushNotificationConfig({
        tenant: "",
        id: "",
        taskId: crypto.randomUUID(),
        url: `${webhook.url}/x`,
        token: "",
        authentication: undefined,
      }),
    ).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it("retries a refused delivery with backoff until the webhook takes it, with the same delivery id and body", async () => {
    const client = await sdkClient();
    const result = await client.sendMessage({
      tenant: "",
      message: userMessage("hello flaky"),
      configuration: {
        acceptedOutputModes: [],
        returnImmediately: false,
        taskPushNotificationConfig: {
          tenant: "",
          id: "",
          taskId: "",
          url: `${webhook.url}/flaky`,
          token: "flaky-token",
          authentication: undefined,
        },
      },
      metadata: undefined,
    });
    if (!("status" in result)) throw new Error("expected a task");
    await until(() => statesOf(result.id, "/flaky").includes(TaskState.TASK_STATE_COMPLETED), "the completed delivery");
    const flaky = webhook.deliveries.filter((d) => d.path === "/flaky");
    const byId = new Map<string, Delivery[]>();
    for (const d of flaky)
      byId.set(String(d.headers["x-a2a-notification-id"]), [...(byId.get(String(d.headers["x-a2a-notification-id"])) ?? []), d]);
    for (const tries of byId.values()) {
      expect(tries.map((t) => t.status)).toEqual([503, 503, 200]);
      expect(new Set(tries.map((t) => t.body)).size).toBe(1);
    }
    // Deliveries to one webhook stay in order: the working state arrived before the completed one.
    expect(statesOf(result.id, "/flaky")).toEqual([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
  });

  it("refuses a webhook on a cloud metadata address or with another scheme, with a clear invalid-params error", async () => {
    const client = await sdkClient();
    const started = await client.sendMessage({
      tenant: "",
      message: userMessage("hello refusals"),
      configuration: undefined,
      metadata: undefined,
    });
    if (!("status" in started)) throw new Error("expected a task");
    const create = (url: string) =>
      client.createTaskPushNotificationConfig({ tenant: "", id: "", taskId: started.id, url, token: "", authentication: undefined });
    await expect(create("http://169.254.169.254/latest/meta-data")).rejects.toThrow(/push notification URL refused: .*metadata/);
    await expect(create("http://169.254.169.254/latest/meta-data")).rejects.toBeInstanceOf(RequestMalformedError);
    await expect(create("ftp://example.com/hook")).rejects.toThrow(/push notification URL refused: scheme "ftp" is not allowed/);
    await expect(
      client.sendMessage({
        tenant: "",
        message: userMessage("never starts"),
        configuration: {
          acceptedOutputModes: [],
          returnImmediately: false,
          taskPushNotificationConfig: {
            tenant: "",
            id: "",
            taskId: "",
            url: "http://169.254.169.254/",
            token: "",
            authentication: undefined,
          },
        },
        metadata: undefined,
      }),
    ).rejects.toBeInstanceOf(RequestMalformedError);
  });
});
