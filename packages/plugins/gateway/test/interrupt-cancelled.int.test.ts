import { describeWithPostgres, type Script, usePostgresSchema } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import type { StorageConfigInput } from "../../runtime/test/storage.js";
import { startTestGateway } from "./fixtures.js";

// Issue 26, G13: with `interrupt`, an interrupted `runs/wait` must answer a coded 409 ANTLER_ERR_RUN_CANCELLED.
// On PostgreSQL about one in thirty answered a plain 500: LangChain rejects an aborted step with the abort reason as
// a plain Error, and when that rejection had settled before the run's next step was raced against its cancel, it
// won the race. Thirty runs at once on one thread, three rounds, make that step boundary common enough to hit.

const RUNS = 30;
const ROUNDS = 3;
const echo: Script = { respond: (messages) => ({ text: `reply to ${String(messages.at(-1)?.content)}`, delayMs: 300 }) };

function interruptContract(storageOf: () => StorageConfigInput) {
  it(`every interrupted run of ${ROUNDS} × ${RUNS} answers 409 ANTLER_ERR_RUN_CANCELLED as JSON, none a 500`, async () => {
    const gw = await startTestGateway({ script: echo, kernelConfig: { storage: storageOf() } });
    for (let round = 0; round < ROUNDS; round++) {
      const threadId = `busy-${round}`;
      expect((await gw.call("/api/threads", { method: "POST", json: { thread_id: threadId } })).status).toBe(201);
      const outcomes = await Promise.all(
        Array.from({ length: RUNS }, async (_, i) => {
          const response = await gw.call(`/api/threads/${threadId}/runs/wait`, {
            method: "POST",
            json: { message: `prompt ${i}`, multitask_strategy: "interrupt" },
          });
          const text = await response.text();
          return { status: response.status, text };
        }),
      );
      const interrupted = outcomes.filter((o) => o.status !== 200);
      expect(outcomes.length - interrupted.length).toBeGreaterThanOrEqual(1);
      for (const o of interrupted) {
        expect(o, "an interrupted run answered something other than a coded 409").toMatchObject({ status: 409 });
        expect((JSON.parse(o.text) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_RUN_CANCELLED");
      }
    }
    expect(gw.logs.filter((line) => line.msg === "unhandled error")).toEqual([]);
  });
}

describeWithPostgres("interrupt on PostgreSQL (HTTP)", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_interrupt" });
  interruptContract(() => ({ backend: "postgres", postgres_url: url, postgres_schema: schema.name }));
});

describe("interrupt on SQLite (HTTP)", () => {
  interruptContract(() => ({ backend: "sqlite" }));
});
