import { describeWithPostgres, runKernelCommand, usePostgresSchema, useTempDirs } from "@antler/kernel/testing";
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

describe("antler runs list --status paused", () => {
  it("lists paused runs (every user's with --all-users) with what they wait for, and refuses an unknown status", async () => {
    const dir = temp.tempDir("antler-approval-cli-");
    const ledger: Ledger = [];
    const a = await approvalClient({ dir, ledger, script: callThenReport([BASH]) });
    const paused = await a.client.invoke("clean up", { threadId: "t1", userId: "alice" });
    await a.client.invoke("hello", { threadId: "t2", userId: "bob" });
    await a.client.close();
    const b = await approvalClient({ dir, ledger, script: callThenReport([BASH]) });
    open.push(b);
    const all = await runKernelCommand(b.client.kernel, ["runs", "list", "--status", "paused", "--all-users", "--json"]);
    expect(all.code).toBe(0);
    const listed = JSON.parse(all.stdout) as {
      runs: Array<{ run_id: string; user_id: string; status: string; interrupt: { value: { calls: unknown[] } } }>;
    };
    expect(listed.runs.map((r) => [r.user_id, r.status])).toEqual([
      ["bob", "paused"],
      ["alice", "paused"],
    ]);
    expect(listed.runs[1]?.run_id).toBe(paused.run_id);
    const text = await runKernelCommand(b.client.kernel, ["runs", "list", "--status", "paused", "--user", "alice"]);
    expect(text.stdout).toContain(`${paused.run_id}  alice/t1  paused`);
    expect(text.stdout).toContain("waits: bash until ");
    expect(text.stdout).not.toContain("bob/t2");
    const bad = await runKernelCommand(b.client.kernel, ["runs", "list", "--status", "sleeping"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--status must be one of pending, running, paused, success, error, cancelled");
    expect(ledger).toEqual([]);
  });
});
