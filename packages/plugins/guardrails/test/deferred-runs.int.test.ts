import type { Script, ScriptFunction } from "@antler/kernel/testing";
import batchPlugin, { BATCH_SERVICE } from "@antler/plugin-batch";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import schedulerPlugin from "@antler/plugin-scheduler";
import subagentsPlugin from "@antler/plugin-subagents";
import { type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { callOnce, guardedClient, onCleanup, toolMessages } from "./fixtures.js";

// Scheduled tasks and batches run later, without the request that created them. They must act with the role of
// the key that created them. Here default_role is the permissive one, so a run that fell back to it (what
// happened before the creator's role was recorded) would run bash and use the big model.
const ALICE_KEY = "alice-key-0123456789abcdef"; // role user: web and file:read, model small
const AUTHORIZATION = {
  enabled: true,
  default_role: "admin",
  roles: {
    admin: { tool_groups: ["*"], models: ["*"] },
    user: { tool_groups: ["web", "file:read"], models: ["small"] },
    // May delegate (batch_task is in group subagent), still no bash.
    delegator: { tool_groups: ["web", "subagent"], models: ["small"] },
  },
};

async function guarded(script: Script, config: Record<string, unknown> = {}) {
  return guardedClient({
    script,
    config: { authorization: AUTHORIZATION, ...config },
    plugins: [
      { plugin: schedulerPlugin, config: { poll_interval_seconds: 0.1 } },
      subagentsPlugin,
      { plugin: batchPlugin, config: { worker: { poll_ms: 20 } } },
    ],
  });
}

async function serve(script: Script, config: Record<string, unknown> = {}) {
  const client = await guarded(script, config);
  const gateway: RunningGateway = await startGateway({
    client: client.client,
    config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: ALICE_KEY, user: "alice", role: "user" }] } },
    shutdownGraceMs: 1000,
  });
  onCleanup(() => gateway.close());
  const call = async <T = Record<string, unknown>>(path: string, json?: unknown): Promise<{ status: number; body: T; text: string }> => {
    const response = await fetch(`${gateway.url}/api${path}`, {
      method: json === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${ALICE_KEY}`, "content-type": "application/json" },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
    const text = await response.text();
    const isJson = response.headers.get("content-type")?.startsWith("application/json") === true;
    return { status: response.status, body: (isJson ? JSON.parse(text) : undefined) as T, text };
  };
  return { ...client, call };
}

async function waitFor<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

type ScheduledRun = { status: string; error: string | null };

/** Adds a once task through the gateway (due at once; the poller fires it) and waits for its occurrence to end. */
async function scheduleAndWait(call: Awaited<ReturnType<typeof serve>>["call"], task: Record<string, unknown>) {
  const added = await call<{ id: string; user_role: string | null }>("/scheduled-tasks", {
    prompt: "run a shell",
    at: new Date(Date.now() + 300).toISOString(),
    ...task,
  });
  expect(added.status).toBe(201);
  expect(added.body.user_role).toBe("user");
  return waitFor(async () => {
    const { body } = await call<{ runs: ScheduledRun[] }>(`/scheduled-tasks/${added.body.id}/runs`);
    const run = body.runs[0];
    return run && run.status !== "running" ? run : undefined;
  }, "the scheduled occurrence");
}

type ExportedItem = { key: string; state: string; error: string | null; result: string | null };

/** Submits a one-item batch through the gateway and waits until it is finished; returns its item. */
async function batchAndWait(call: Awaited<ReturnType<typeof serve>>["call"]): Promise<ExportedItem> {
  const submitted = await call<{ id: string }>("/batches", {
    title: "shell work",
    subagent_type: "general-purpose",
    items: [{ key: "a", prompt: "run a shell" }],
  });
  expect(submitted.status).toBe(201);
  await waitFor(async () => {
    const { body } = await call<{ state: string }>(`/batches/${submitted.body.id}`);
    return body.state === "active" ? undefined : body;
  }, "the batch to finish");
  const { text } = await call(`/batches/${submitted.body.id}/items`);
  const [item, ...rest] = text.trim().split("\n");
  expect(rest).toEqual([]);
  return JSON.parse(item ?? "null") as ExportedItem;
}

describe("a scheduled task acts with the role of the API key that created it", () => {
  it("its run is not offered a tool group the role lacks, and the model's call to one is refused", async () => {
    const { call, calls, runs } = await serve(callOnce("bash"));
    const run = await scheduleAndWait(call, {});
    expect(run.status).toBe("succeeded");
    expect(runs.bash).toBe(0);
    expect(calls()[0]?.tools).not.toContain("bash");
    expect(calls()[0]?.tools).toContain("web_lookup");
    const [refusal] = toolMessages(calls()[1]?.messages ?? []);
    expect(refusal?.content).toContain('- role_forbids_tool_group: role "user" may not use tools of group "bash"');
  });

  it("its run on a model the role may not use is refused before the model is called", async () => {
    const { call, calls } = await serve(callOnce("bash"));
    const run = await scheduleAndWait(call, { model: "big" });
    expect(run.status).toBe("failed");
    expect(run.error).toContain('role "user" may not use model "big"');
    expect(calls()).toHaveLength(0);
  });
});

describe("a batch's items act with the role of the API key that submitted it", () => {
  it("an item's subagent is not offered a tool group the role lacks, and its call to one is refused", async () => {
    const { call, calls, runs } = await serve(callOnce("bash"));
    const item = await batchAndWait(call);
    expect(item.state).toBe("completed");
    expect(runs.bash).toBe(0);
    expect(calls()[0]?.tools).not.toContain("bash");
    expect(calls()[0]?.tools).toContain("web_lookup");
    const [refusal] = toolMessages(calls()[1]?.messages ?? []);
    expect(refusal?.content).toContain('- role_forbids_tool_group: role "user" may not use tools of group "bash"');
  });

  it("an item whose subagent would run on a model the role may not use fails before the model is called", async () => {
    // general-purpose inherits the default model, which role user may not use.
    const { call, calls } = await serve(callOnce("bash"), { default_model: "big" });
    const item = await batchAndWait(call);
    expect(item.state).toBe("failed");
    expect(item.error).toContain('role "user" may not use model "big"');
    expect(calls()).toHaveLength(0);
  });
});

describe("a batch submitted by a lead run's batch_task acts with that run's role", () => {
  it("the item's subagent is refused a tool group the lead's role lacks", async () => {
    const task = (messages: BaseMessage[]) => String(messages.find((m) => HumanMessage.isInstance(m))?.content ?? "");
    // The lead submits one item; the item's subagent tries bash. One scripted model serves both.
    const script: ScriptFunction = (messages) => {
      const answered = ToolMessage.isInstance(messages.at(-1));
      if (task(messages).includes("run a shell")) return answered ? { text: "done" } : { toolCalls: [{ name: "bash", args: { q: "x" } }] };
      if (answered) return { text: "submitted" };
      return {
        toolCalls: [
          {
            name: "batch_task",
            args: { title: "shell work", subagent_type: "general-purpose", items: [{ key: "a", prompt: "run a shell" }] },
          },
        ],
      };
    };
    const { client, calls, runs } = await guarded(script, { subagents: { enabled: true } });
    await client.chat("delegate the shell work", { threadId: "lead", userRole: "delegator" });
    const submitted = toolMessages(calls()[1]?.messages ?? [])[0];
    const batchId = /batch_[0-9a-f]{32}/.exec(String(submitted?.content))?.[0] as string;
    expect(batchId).toBeDefined();
    const batches = await client.kernel.scope.resolve(BATCH_SERVICE).client("default");
    const status = await waitFor(async () => {
      const current = await batches.status(batchId);
      return current.state === "active" ? undefined : current;
    }, "the batch to finish");
    expect(status.userRole).toBe("delegator");
    expect(status.counts.completed).toBe(1);
    expect(runs.bash).toBe(0);
    const subagentCalls = calls().filter((c) => task(c.messages).includes("run a shell"));
    expect(subagentCalls[0]?.tools).not.toContain("bash");
    const [refusal] = toolMessages(subagentCalls[1]?.messages ?? []);
    expect(refusal?.content).toContain('- role_forbids_tool_group: role "delegator" may not use tools of group "bash"');
  });
});
