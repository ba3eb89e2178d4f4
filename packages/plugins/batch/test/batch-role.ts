import type { AntlerDatabase, KernelConfigInput } from "@antler/kernel";
import type { SubagentOutcome, SubagentRequest, SubagentRunner } from "@antler/plugin-subagents";
import { sql } from "kysely";
import { afterEach, expect, it } from "vitest";
import { BATCHES_TABLE, BatchStore, BatchWorker, batchMigrations, ITEMS_TABLE } from "../src/index.js";
import { createDatabase, sleep, submission } from "./fixtures.js";

/** Where a suite's database lives: the storage section, and for PostgreSQL a schema of its own. */
export interface RoleSuiteStorage {
  storage: NonNullable<KernelConfigInput["storage"]>;
  schema?: string;
  baseDir?: string;
}

/** A runner that records each request and answers at once. */
function recordingRunner(requests: SubagentRequest[]): SubagentRunner {
  return {
    types: () => ["general-purpose"],
    async run(request): Promise<SubagentOutcome> {
      requests.push(request);
      return { status: "completed", result: "ok", resultSha256: "", receipts: [], durationMs: 0 };
    },
  };
}

/**
 * A batch acts with its submitter's authorization role, recorded durably; a batch stored before the role column
 * existed keeps acting with `default_role` (no role handed to the runner). Run on SQLite and PostgreSQL.
 */
export function batchRoleSuite(where: () => RoleSuiteStorage): void {
  const open: AntlerDatabase[] = [];
  const workers: BatchWorker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop(1000)));
    for (const database of open.splice(0)) await database.close();
  });

  async function database(migrations = batchMigrations): Promise<AntlerDatabase> {
    const { storage, schema, baseDir } = where();
    const db = await createDatabase(storage, { schema, migrations, baseDir });
    open.push(db);
    return db;
  }

  async function runAll(store: BatchStore, batchId: string): Promise<SubagentRequest[]> {
    const requests: SubagentRequest[] = [];
    const worker = new BatchWorker({
      store,
      runner: recordingRunner(requests),
      concurrency: 4,
      leaseMs: 5000,
      heartbeatMs: 200,
      maxAttempts: 3,
      pollMs: 20,
    });
    workers.push(worker);
    worker.start();
    const deadline = Date.now() + 10_000;
    while ((await store.status("alice", batchId)).state === "active") {
      if (Date.now() > deadline) throw new Error("timed out waiting for the batch");
      await sleep(20);
    }
    return requests;
  }

  it("records the submitter's role with the batch, and every item's subagent is asked to act with it", async () => {
    const store = new BatchStore(await database());
    const batch = await store.createBatch("alice", submission(3), { traceId: "t1", userRole: "user" });
    expect(batch.userRole).toBe("user");
    expect((await store.getBatch("alice", batch.id)).userRole).toBe("user");
    const requests = await runAll(store, batch.id);
    expect(requests.map((r) => r.userRole)).toEqual(["user", "user", "user"]);
  });

  it("migrates a batch stored before batch/002-batch-role to no role, so its items act with default_role", async () => {
    const before = await database(batchMigrations.slice(0, 1));
    const at = new Date().toISOString();
    // The row as the first migration's schema holds it: there is no user_role column yet.
    await sql`insert into ${sql.table(BATCHES_TABLE)} (id, owner_id, title, subagent_type, state, total_items, trace_id, created_at)
      values ('batch_legacy', 'alice', 'legacy', 'general-purpose', 'active', 1, 'trace-legacy', ${at})`.execute(before.db);
    await sql`insert into ${sql.table(ITEMS_TABLE)} (batch_id, item_key, seq, prompt) values ('batch_legacy', 'a', 0, 'old work')`.execute(
      before.db,
    );
    const store = new BatchStore(await database());
    expect((await store.getBatch("alice", "batch_legacy")).userRole).toBeNull();
    const requests = await runAll(store, "batch_legacy");
    expect(requests).toHaveLength(1);
    expect(requests[0]?.userRole).toBeUndefined();
  });
}
