import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StorageConfigInput } from "@antler/kernel";
import { describeWithPostgres, scriptedModelsPlugin, usePostgresSchema } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import { afterEach, expect, it } from "vitest";
import { ALICE_KEY, serveAsAlice } from "./fixtures.js";

// Two gateway instances behind a load balancer (separate clients, kernels and HTTP servers) on one PostgreSQL
// database: the multitask rule holds between them through the run records alone.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function instance(storage: StorageConfigInput) {
  const dir = mkdtempSync(join(tmpdir(), "antler-gw-multitask-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const client = await AntlerClient.create({
    config: {
      base_dir: dir,
      models: [{ name: "m", provider: "scripted" }],
      storage,
      title: { enabled: false },
      logging: { level: "error" },
    },
    plugins: [
      scriptedModelsPlugin({ m: { respond: (messages) => ({ text: `reply to ${String(messages.at(-1)?.content)}`, delayMs: 1500 }) } }),
    ],
    cwd: dir,
    env: {},
    discover: false,
  });
  await client.listThreads();
  const gateway = await serveAsAlice(client, cleanups);
  return (path: string, json?: unknown) =>
    fetch(`${gateway.url}${path}`, {
      method: json === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${ALICE_KEY}`, ...(json === undefined ? {} : { "content-type": "application/json" }) },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
}

describeWithPostgres("multitask reject across two gateways on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_gw_multitask" });

  it("of 30 runs sent at once to two gateways on one thread, one runs and 29 get 409 THREAD_BUSY naming it", async () => {
    const storage: StorageConfigInput = { backend: "postgres", postgres_url: url, postgres_schema: schema.name };
    const a = await instance(storage);
    const b = await instance(storage);
    expect((await a("/api/threads", { thread_id: "shared" })).status).toBe(201);
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const response = await (i % 2 === 0 ? a : b)("/api/threads/shared/runs/wait", {
          message: `prompt ${i}`,
          multitask_strategy: "reject",
        });
        return { prompt: `prompt ${i}`, status: response.status, body: (await response.json()) as { run_id?: string } };
      }),
    );
    const accepted = outcomes.filter((o) => o.status === 200);
    expect(accepted).toHaveLength(1);
    const runId = accepted[0]?.body.run_id;
    for (const o of outcomes.filter((x) => x.status !== 200)) {
      expect(o.status).toBe(409);
      expect(o.body).toMatchObject({ error: { code: "ANTLER_ERR_THREAD_BUSY", details: { thread_id: "shared", running_run_id: runId } } });
    }
    const state = (await (await b("/api/threads/shared/state")).json()) as { messages: Array<{ type: string; content: string }> };
    expect(state.messages.filter((m) => m.type === "ai").map((m) => m.content)).toEqual([`reply to ${accepted[0]?.prompt}`]);
  });
});
