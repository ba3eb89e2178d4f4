import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StorageConfigInput } from "@antler/kernel";
import { describeWithPostgres, scriptedModelsPlugin, usePostgresSchema } from "@antler/kernel/testing";
import { AntlerClient, type AntlerClientOptions } from "@antler/plugin-runtime";
import { afterEach, describe, expect, it } from "vitest";
import type { RunningGateway } from "../src/server.js";
import { callAsAlice, readSse, type SseFrame, serveAsAlice } from "./fixtures.js";

// Two gateway instances behind a load balancer: separate clients, kernels and HTTP servers on one database.
// The stream goes to one; the cancel lands on the other.

interface Instance {
  gateway: RunningGateway;
  client: AntlerClient;
  call(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
}

const cleanups: Array<() => Promise<void>> = [];
async function cleanUp(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await fn();
}

function sharedDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "antler-gw-pair-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function instance(dir: string, storage: StorageConfigInput, runLeases: AntlerClientOptions["runLeases"]): Promise<Instance> {
  const client = await AntlerClient.create({
    config: {
      base_dir: dir,
      models: [{ name: "m", provider: "scripted" }],
      storage,
      title: { enabled: false },
      logging: { level: "error" },
    },
    plugins: [scriptedModelsPlugin({ m: [{ text: "never said", delayMs: 60_000 }] })],
    cwd: dir,
    env: {},
    discover: false,
    runLeases,
  });
  // Open storage now, one instance at a time (two SQLite handles in one process must not migrate at once).
  await client.listThreads();
  const gateway = await serveAsAlice(client, cleanups);
  return { gateway, client, call: callAsAlice(gateway) };
}

/** Starts a slow run on `owner` and returns its id and the rest of its SSE stream, once the run is recorded. */
async function startSlowRun(owner: Instance, threadId: string) {
  expect((await owner.call("/api/threads", { method: "POST", json: { thread_id: threadId } })).status).toBe(201);
  const response = await owner.call(`/api/threads/${threadId}/runs/stream`, { method: "POST", json: { message: "take your time" } });
  const frames = readSse(response);
  const first = await frames.next();
  const runId = (first.value?.data as { run_id?: string } | undefined)?.run_id as string;
  await expect.poll(async () => (await owner.call(`/api/threads/${threadId}/runs/${runId}`)).status).toBe(200);
  const rest = (async () => {
    const out: SseFrame[] = [];
    for await (const frame of { [Symbol.asyncIterator]: () => frames }) out.push(frame);
    return out;
  })();
  return { runId, rest };
}

function cancelAcrossGateways(place: () => { dir: string; storage: StorageConfigInput }) {
  // Registered after the suite's schema hooks, so instances close before the schema is dropped.
  afterEach(cleanUp);

  it("a cancel sent to the gateway that does not hold the run stops it: 200 cancelled, and the stream ends RUN_CANCELLED", async () => {
    const { dir, storage } = place();
    const owner = await instance(dir, storage, { heartbeatMs: 50, leaseMs: 5000 });
    const other = await instance(dir, storage, { heartbeatMs: 50, leaseMs: 5000 });
    const { runId, rest } = await startSlowRun(owner, "t-pair");
    const cancel = await other.call(`/api/threads/t-pair/runs/${runId}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(200);
    expect(await cancel.json()).toEqual({ run_id: runId, thread_id: "t-pair", status: "cancelled" });
    const frames = await rest;
    expect(frames.at(-1)).toMatchObject({ event: "error", data: { code: "ANTLER_ERR_RUN_CANCELLED", run_id: runId } });
    expect(frames.some((f) => f.event === "end")).toBe(false);
    for (const gw of [owner, other]) {
      expect(await (await gw.call(`/api/threads/t-pair/runs/${runId}`)).json()).toMatchObject({ status: "cancelled", error: null });
    }
    const again = await other.call(`/api/threads/t-pair/runs/${runId}/cancel`, { method: "POST" });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { message: string } }).error.message).toContain("already ended with status cancelled");
  });

  it("a cancel the owner has not honoured within the wait is 202 running; the owner stops the run at its next heartbeat", async () => {
    const { dir, storage } = place();
    const owner = await instance(dir, storage, { heartbeatMs: 1000, leaseMs: 5000 });
    const other = await instance(dir, storage, { heartbeatMs: 50, leaseMs: 5000, cancelWaitMs: 1 });
    const { runId, rest } = await startSlowRun(owner, "t-accepted");
    const cancel = await other.call(`/api/threads/t-accepted/runs/${runId}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(202);
    expect(await cancel.json()).toEqual({ run_id: runId, thread_id: "t-accepted", status: "running" });
    const frames = await rest;
    expect(frames.at(-1)).toMatchObject({ event: "error", data: { code: "ANTLER_ERR_RUN_CANCELLED", run_id: runId } });
    expect(await (await other.call(`/api/threads/t-accepted/runs/${runId}`)).json()).toMatchObject({ status: "cancelled" });
  });
}

describe("cancelling across two gateways on one SQLite file", () => {
  cancelAcrossGateways(() => ({ dir: sharedDir(), storage: { backend: "sqlite" } }));
});

describeWithPostgres("cancelling across two gateways on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_gw_pair" });
  cancelAcrossGateways(() => ({ dir: sharedDir(), storage: { backend: "postgres", postgres_url: url, postgres_schema: schema.name } }));
});
