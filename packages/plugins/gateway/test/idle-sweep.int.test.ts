import { type AntlerDatabase, runMigrations } from "@antler/kernel";
import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { createRunStore, runRecordMigrations } from "@antler/plugin-runtime";
import { afterEach, describe, expect, it } from "vitest";
import { createDatabase, type StorageConfigInput } from "../../runtime/test/storage.js";
import { startTestGateway } from "./fixtures.js";

// Issue 26, G9 (and issue 29): a gateway instance that serves nothing must still take care of the runs a dead
// instance left behind, within a lease or so, without anyone reading them: a running one is taken over and
// continued, a queued one (never started) is finished as an error. The dead instance is played by run rows written straight into
// the shared database under an owner id that never renews its lease (what a SIGKILLed process leaves).

const opened: AntlerDatabase[] = [];
afterEach(async () => {
  for (const database of opened.splice(0)) await database.close();
});

function idleSweepContract(storageOf: () => StorageConfigInput) {
  it("an idle instance takes over a dead instance's running run and sweeps its queued one, without being asked", async () => {
    const storage = storageOf();
    const gw = await startTestGateway({ kernelConfig: { storage }, client: { runLeases: { heartbeatMs: 50, leaseMs: 1000 } } });
    const database = await createDatabase(storage, { baseDir: gw.baseDir, schema: storage.postgres_schema });
    opened.push(database);
    await runMigrations(database, runRecordMigrations);
    const dead = createRunStore(database);
    const orphan = { userId: "alice", traceId: "x", model: "m", kwargs: {}, owner: { id: "dead-instance", leaseMs: 50 } };
    await dead.create({ ...orphan, runId: "orphan-running", threadId: "t-running" });
    await dead.create({ ...orphan, runId: "orphan-pending", threadId: "t-pending", status: "pending" });
    // Read without the lazy sweep a reader would trigger: only the idle instance can have finished them.
    const statuses = async () =>
      Promise.all(["orphan-running", "orphan-pending"].map(async (id) => (await dead.get("alice", id, { sweep: false }))?.status));
    await expect.poll(statuses, { timeout: 10_000, interval: 25 }).toEqual(["success", "error"]);
    expect(await dead.get("alice", "orphan-running", { sweep: false })).toMatchObject({ attempt: 2, error: null });
    expect((await dead.get("alice", "orphan-pending", { sweep: false }))?.error).toMatch(/lease expired/);
  });
}

describe("an idle gateway on SQLite", () => {
  idleSweepContract(() => ({ backend: "sqlite" }));
});

describeWithPostgres("an idle gateway on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_idle_sweep" });
  idleSweepContract(() => ({ backend: "postgres", postgres_url: url, postgres_schema: schema.name }));
});
