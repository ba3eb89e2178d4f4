import { describeWithPostgres, usePostgresSchema, useTempDirs } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { type ApprovalClient, approvalClient, callThenReport, type Ledger } from "./approval-fixtures.js";

const temp = useTempDirs();
const open: ApprovalClient[] = [];
afterEach(async () => {
  for (const { client } of open.splice(0)) await client.close();
});

const BASH = { name: "bash", args: { command: "rm -rf build" }, id: "call_bash" };

// Client A pauses and is closed (kernel, checkpointer and database with it); client B, built afresh on the same
// storage, resumes. Nothing of the pause lives in A's memory: the run record and the checkpoint carry it.
async function pauseThenResumeElsewhere(dir: string, storage: Record<string, unknown>) {
  const ledger: Ledger = [];
  const a = await approvalClient({ dir, ledger, storage, script: callThenReport([BASH]) });
  const paused = await a.client.invoke("clean up", { threadId: "t1" });
  expect(paused.status).toBe("paused");
  await a.client.close();
  const b = await approvalClient({ dir, ledger, storage, script: callThenReport([BASH]) });
  open.push(b);
  expect((await b.client.getRun("t1", paused.run_id)).status).toBe("paused");
  const done = await b.client.resume("t1", paused.run_id, { decision: "approve" });
  expect(done).toMatchObject({ run_id: paused.run_id, trace_id: paused.trace_id, status: "success" });
  expect(ledger).toEqual([{ tool: "bash", args: { command: "rm -rf build" } }]);
  // B's model was called once, after the tool: the model call before the pause is never repeated.
  expect(b.calls()).toHaveLength(1);
  expect(done.output).toContain('[call_bash] bash ran with {"command":"rm -rf build"}');
  expect((await b.client.getRun("t1", paused.run_id)).status).toBe("success");
}

describe("a pause survives a restart", () => {
  it("on a SQLite file: a new client resumes the run another client paused, and the tool runs once", async () => {
    await pauseThenResumeElsewhere(temp.tempDir("antler-approval-restart-"), { backend: "sqlite" });
  });
});

describeWithPostgres("a pause survives a restart on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { scope: "each" });
  it("on PostgreSQL: a new client resumes the run another client paused, and the tool runs once", async () => {
    await pauseThenResumeElsewhere(temp.tempDir("antler-approval-restart-pg-"), {
      backend: "postgres",
      postgres_url: url,
      postgres_schema: schema.name,
    });
  });
});
