// Push notifications from a real `antler serve` (the compiled CLI in a child process), driven by the official
// @a2a-js/sdk client: a webhook on loopback (admitted with push.allow_private_addresses) receives the task's
// states, each signed with HMAC-SHA256 of the body under the config's token. (The refusal of a private address when
// it is not admitted is in serve-cli.int.test.ts, whose server keeps the default.)
import { createHmac, timingSafeEqual } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Role, StreamResponse, TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
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
const TRACE_ID = "a2a-serve-push-trace-0001";

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}

/** What a receiver does: recompute the HMAC over the bytes received and compare in constant time. */
function signatureValid(d: Delivery, token: string): boolean {
  const sent = String(d.headers["x-a2a-notification-signature"] ?? "");
  const expected = `sha256=${createHmac("sha256", token).update(d.body).digest("hex")}`;
  return sent.length === expected.length && timingSafeEqual(Buffer.from(sent), Buffer.from(expected));
}

function stateOf(d: Delivery): TaskState | undefined {
  const payload = StreamResponse.fromJSON(JSON.parse(d.body)).payload;
  return payload?.$case === "task"
    ? payload.value.status?.state
    : payload?.$case === "statusUpdate"
      ? payload.value.status?.state
      : undefined;
}

describe.skipIf(!built)("A2A push notifications from `antler serve` (compiled CLI in a child process; needs a build first)", () => {
  let dir: string;
  let model: OpenAICompatibleServer;
  let serve: AntlerServe;
  let webhook: Server;
  let webhookUrl: string;
  const deliveries: Delivery[] = [];

  beforeAll(async () => {
    webhook = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (p: Buffer) => parts.push(p));
      req.on("end", () => {
        deliveries.push({ headers: { ...req.headers }, body: Buffer.concat(parts).toString("utf8") });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => webhook.listen(0, "127.0.0.1", r));
    webhookUrl = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/hook`;
    model = await startOpenAICompatibleServer({ handler: () => ({ text: "pushed answer" }) });
    dir = mkdtempSync(join(tmpdir(), "antler-a2a-serve-push-"));
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
        "      push:",
        "        allow_private_addresses: true   # the webhook is on loopback",
        "",
      ].join("\n"),
    );
    serve = await startAntlerServe({ cwd: dir, env: { ALICE_KEY } });
  }, 90_000);

  afterAll(async () => {
    await serve?.stop();
    await model?.close();
    if (webhook) {
      webhook.closeAllConnections();
      await new Promise<void>((r) => webhook.close(() => r()));
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("delivers the task's working and completed states to a loopback webhook, each signed with the config's token and traced", async () => {
    const keyed: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${ALICE_KEY}`);
      headers.set("x-trace-id", TRACE_ID);
      return fetch(input, { ...init, headers });
    };
    const client = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl: keyed })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }),
      }),
    ).createFromUrl(serve.url);
    const token = "serve-push-token-0123456789";
    const task = await client.sendMessage({
      tenant: "",
      message: {
        messageId: crypto.randomUUID(),
        contextId: "",
        taskId: "",
        role: Role.ROLE_USER,
        parts: [{ content: { $case: "text", value: "push me" }, metadata: undefined, filename: "", mediaType: "text/plain" }],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: {
        acceptedOutputModes: [],
        returnImmediately: false,
        taskPushNotificationConfig: { tenant: "", id: "", taskId: "", url: webhookUrl, token, authentication: undefined },
      },
      metadata: undefined,
    });
    if (!("status" in task)) throw new Error("expected a task");
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // Delivery runs beside the answer: wait (bounded) until the final state arrived.
    for (let i = 0; i < 400 && !deliveries.some((d) => stateOf(d) === TaskState.TASK_STATE_COMPLETED); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(deliveries.map(stateOf)).toEqual([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
    for (const d of deliveries) {
      expect(signatureValid(d, token)).toBe(true);
      expect(signatureValid(d, "another-token")).toBe(false);
      expect(d.headers["content-type"]).toBe("application/a2a+json");
      expect(d.headers["x-trace-id"]).toBe(TRACE_ID);
      expect(d.headers["x-a2a-notification-id"]).toBeTruthy();
    }
    const registered = await client.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" });
    expect(registered.configs.map((c) => c.url)).toEqual([webhookUrl]);
  });
});
