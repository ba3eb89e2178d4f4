import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kernel } from "@antler/kernel";
import { createTestKernel } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import subagentsPlugin from "@antler/plugin-subagents";
import { afterEach, describe, expect, it } from "vitest";
import batchPlugin, { BATCH_SERVICE, BatchErrorCodes, type ExportedItem, type PublicBatchStatus } from "../src/index.js";
import { stubRunnerPlugin } from "../src/testing/index.js";
import { sleep } from "./fixtures.js";

const ALICE = "alice-key-0123456789abcdef";
const BOB = "bob-key-0123456789abcdef00";

interface Harness {
  kernel: Kernel;
  gateway: RunningGateway;
  dir: string;
  executions: string;
}

const open: Array<{ kernel: Kernel; client: AntlerClient; gateway: RunningGateway; dir: string }> = [];

afterEach(async () => {
  for (const h of open.splice(0)) {
    await h.gateway.close();
    await h.client.close();
    await h.kernel.close();
    rmSync(h.dir, { recursive: true, force: true });
  }
});

/** A kernel with real SQLite under a temp base_dir, the stub runner, and the gateway on loopback with two users. */
async function boot(options: { sleepMs?: number } = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), "antler-batch-http-"));
  const executions = join(dir, "executions.jsonl");
  const kernel = await createTestKernel({
    builtins: true,
    plugins: [
      subagentsPlugin,
      { plugin: stubRunnerPlugin, config: { sleep_ms: options.sleepMs ?? 5, executions_file: executions } },
      // Short heartbeats so a cancelled item's worker notices at once and aborts its run.
      { plugin: batchPlugin, config: { worker: { poll_ms: 20 }, lease_seconds: 2, heartbeat_seconds: 0.05 } },
    ],
    config: { base_dir: join(dir, "base") },
    cwd: dir,
  });
  const client = new AntlerClient({ kernel });
  const gateway = await startGateway({
    client,
    config: {
      port: 0,
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
  open.push({ kernel, client, gateway, dir });
  return { kernel, gateway, dir, executions };
}

interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

async function call<T = PublicBatchStatus & ErrorBody>(
  gateway: RunningGateway,
  path: string,
  init: { key?: string; method?: string; json?: unknown } = {},
): Promise<{ status: number; body: T; text: string; headers: Headers }> {
  const response = await fetch(`${gateway.url}/api${path}`, {
    method: init.method ?? (init.json === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${init.key ?? ALICE}`,
      ...(init.json === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });
  const text = await response.text();
  const json = response.headers.get("content-type")?.startsWith("application/json") && text ? JSON.parse(text) : null;
  return { status: response.status, body: json as T, text, headers: response.headers };
}

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `k${i}`, prompt: `do ${i}` }));
const submission = (n: number) => ({ title: "over http", subagent_type: "general-purpose", items: items(n) });

async function pollStatus(
  gateway: RunningGateway,
  batchId: string,
  until: (status: PublicBatchStatus) => boolean,
  what: string,
): Promise<PublicBatchStatus> {
  for (let i = 0; i < 500; i++) {
    const { status, body } = await call(gateway, `/batches/${batchId}`);
    expect(status).toBe(200);
    if (until(body)) return body;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function parseJsonl(text: string): ExportedItem[] {
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as ExportedItem);
}

describe("/api/batches over HTTP", () => {
  it("submits a batch as the caller, stamps the request's trace id, runs it, and streams each item's result once as JSONL", async () => {
    const { gateway } = await boot();
    const created = await call(gateway, "/batches", { json: { ...submission(12), title: "  twelve  " } });
    expect(created.status).toBe(201);
    const batch = created.body;
    expect(batch).toMatchObject({ title: "twelve", subagent_type: "general-purpose", total_items: 12, thread_id: null });
    expect(batch.id).toMatch(/^batch_[0-9a-f]{32}$/);
    expect(Object.values(batch.counts).reduce((a, b) => a + b, 0)).toBe(12);
    expect(batch.trace_id).toBe(created.headers.get("x-trace-id"));
    expect(created.headers.get("location")).toBe(`/api/batches/${batch.id}`);

    const done = await pollStatus(gateway, batch.id, (s) => s.state !== "active", "the batch to finish");
    expect(done).toMatchObject({ state: "completed", done: 12, counts: { completed: 12, pending: 0, running: 0 } });
    expect(done.verdicts.none).toBe(12);

    const exported = await call(gateway, `/batches/${batch.id}/items`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get("content-type")).toContain("application/x-ndjson");
    const lines = parseJsonl(exported.text);
    expect(lines.map((item) => item.key)).toEqual(items(12).map((item) => item.key));
    for (const item of lines) {
      expect(item.state).toBe("completed");
      expect(item.result).toBe(`stub answer to: do ${item.key.slice(1)}`);
      expect(item.trace_id).toBe(batch.trace_id);
    }
  });

  it("lists the caller's own batches, newest first, and none of another user's", async () => {
    const { gateway } = await boot();
    const first = (await call(gateway, "/batches", { json: { ...submission(1), title: "first" } })).body;
    const second = (await call(gateway, "/batches", { json: { ...submission(1), title: "second" } })).body;
    const mine = await call<{ batches: Array<{ id: string; created_at: string }> }>(gateway, "/batches");
    expect(mine.status).toBe(200);
    expect(mine.body.batches.map((b) => b.id).sort()).toEqual([first.id, second.id].sort());
    const stamps = mine.body.batches.map((b) => b.created_at);
    expect(stamps).toEqual([...stamps].sort().reverse());
    expect((await call<{ batches: unknown[] }>(gateway, "/batches?limit=1")).body.batches).toHaveLength(1);
    expect((await call<{ batches: unknown[] }>(gateway, "/batches", { key: BOB })).body.batches).toEqual([]);
    expect((await call(gateway, "/batches?limit=0")).status).toBe(400);
  });

  it("answers 404 to another user for status, cancel and items, and leaves the batch untouched", async () => {
    const { gateway } = await boot({ sleepMs: 30_000 });
    const batch = (await call(gateway, "/batches", { json: submission(3) })).body;
    for (const [method, path] of [
      ["GET", `/batches/${batch.id}`],
      ["POST", `/batches/${batch.id}/cancel`],
      ["GET", `/batches/${batch.id}/items`],
    ] as const) {
      const foreign = await call(gateway, path, { key: BOB, method });
      expect(foreign.status, `${method} ${path}`).toBe(404);
      expect(foreign.body.error.code).toBe(BatchErrorCodes.NOT_FOUND);
      // The same answer as for an id that does not exist.
      const missing = await call(gateway, path.replace(batch.id, "batch_0000"), { method });
      expect(missing.status, `${method} ${path} (missing)`).toBe(404);
    }
    const mine = await call(gateway, `/batches/${batch.id}`);
    expect(mine.body.state).toBe("active");
    expect(mine.body.counts.cancelled).toBe(0);
    // bob's cancel stopped nothing: alice's own cancel still finds all three items live.
    const cancelled = await call<{ cancelled_items: number }>(gateway, `/batches/${batch.id}/cancel`, { method: "POST" });
    expect(cancelled.body.cancelled_items).toBe(3);
  });

  it.each([
    ["empty items", { ...submission(0) }, "items is empty"],
    ["an unknown subagent_type", { ...submission(2), subagent_type: "poet" }, 'unknown subagent_type "poet"'],
    ["duplicate keys", { ...submission(1), items: [...items(2), { key: "k0", prompt: "again" }] }, 'items[2] (key "k0"): duplicate key'],
  ])("refuses %s with 400 naming the field, and stores nothing", async (_case, body, message) => {
    const { gateway, kernel } = await boot();
    const refused = await call(gateway, "/batches", { json: body });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe(BatchErrorCodes.INVALID);
    expect(refused.body.error.message).toContain(message);
    expect(refused.body.error.details?.problems).toEqual([expect.stringContaining(message)]);
    expect(await (await kernel.scope.resolve(BATCH_SERVICE).client("alice")).list()).toEqual([]);
  });

  it("refuses a body of the wrong shape with the gateway's 400 naming the field", async () => {
    const { gateway } = await boot();
    const missing = await call(gateway, "/batches", { json: { title: "t", subagent_type: "general-purpose" } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toMatch(/^items: /);
    const typo = await call(gateway, "/batches", { json: { ...submission(1), max_running_item: 2 } });
    expect(typo.status).toBe(400);
    expect(typo.body.error.message).toContain("max_running_item");
  });

  it("answers 404 for a thread_id the caller does not own", async () => {
    const { gateway } = await boot();
    const refused = await call(gateway, "/batches", { json: { ...submission(1), thread_id: "someone-elses-thread" } });
    expect(refused.status).toBe(404);
  });

  it("cancels a running batch: its items end cancelled and the running subagents are aborted", async () => {
    const { gateway, executions } = await boot({ sleepMs: 30_000 });
    const runEvents = () =>
      existsSync(executions)
        ? readFileSync(executions, "utf8")
            .split("\n")
            .filter((line) => line !== "")
            .map((line) => (JSON.parse(line) as { event: string }).event)
        : [];
    const batch = (await call(gateway, "/batches", { json: submission(8) })).body;
    for (let i = 0; i < 500 && !runEvents().includes("start"); i++) await sleep(20);
    expect(runEvents()).toContain("start");
    expect((await call(gateway, `/batches/${batch.id}`)).body.counts.running).toBeGreaterThan(0);

    const cancelled = await call<PublicBatchStatus & { cancelled_items: number }>(gateway, `/batches/${batch.id}/cancel`, {
      method: "POST",
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ state: "cancelled", cancelled_items: 8, counts: { cancelled: 8 } });

    const exported = parseJsonl((await call(gateway, `/batches/${batch.id}/items`)).text);
    expect(exported).toHaveLength(8);
    expect(exported.every((item) => item.state === "cancelled" && item.result === null)).toBe(true);
    // The workers lose their leases at the next heartbeat and abort every subagent they had started.
    const count = (events: string[], event: string) => events.filter((e) => e === event).length;
    let events = runEvents();
    for (let i = 0; i < 500 && count(events, "aborted") < count(events, "start"); i++) {
      await sleep(20);
      events = runEvents();
    }
    expect(count(events, "aborted")).toBe(count(events, "start"));
    expect(events).not.toContain("end");

    // Cancelling again is idempotent.
    const again = await call<PublicBatchStatus & { cancelled_items: number }>(gateway, `/batches/${batch.id}/cancel`, { method: "POST" });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ state: "cancelled", cancelled_items: 0 });
  });

  it("answers 409 STATE_CONFLICT to cancelling a completed batch and keeps it completed", async () => {
    const { gateway } = await boot();
    const batch = (await call(gateway, "/batches", { json: submission(2) })).body;
    // Wait until the worker has settled the batch row (state completed in the store, finished_at set).
    await pollStatus(gateway, batch.id, (s) => s.state === "completed" && s.finished_at !== null, "the batch to be settled");
    const refused = await call(gateway, `/batches/${batch.id}/cancel`, { method: "POST" });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("ANTLER_ERR_STATE_CONFLICT");
    expect((await call(gateway, `/batches/${batch.id}`)).body.state).toBe("completed");
  });
});
