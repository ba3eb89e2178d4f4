import type { KernelConfigInput } from "@antler/kernel";
import { sql } from "kysely";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Scheduler, schedulerMigrations, TASKS_TABLE } from "../src/index.js";
import { type Harness, harness, schedulerFor, tempDir } from "./helpers.js";

/**
 * A task's occurrences act with the authorization role of whoever added it, recorded with the task; a task stored
 * before the role column existed keeps acting with `default_role` (its runs carry no `user_role`). Run on SQLite
 * and PostgreSQL.
 */
export function taskRoleSuite(storage: () => KernelConfigInput["storage"]): void {
  let dir: ReturnType<typeof tempDir>;
  let h: Harness;
  let scheduler: Scheduler;
  beforeEach(async () => {
    dir = tempDir();
    h = await harness({ baseDir: dir.path, storage: storage() });
    scheduler = schedulerFor(h, undefined);
  });
  afterEach(async () => {
    await scheduler.close();
    await h.close();
    dir.remove();
  });

  /** Runs the task now and returns the runtime context its model call saw. */
  async function contextOfRun(id: string): Promise<Record<string, unknown> | undefined> {
    const { done } = await scheduler.trigger(null, id);
    expect((await done).status).toBe("succeeded");
    return h.contexts.at(-1);
  }

  it("records the adder's role with the task, and its occurrence runs with it", async () => {
    const task = await scheduler.add("alice", { prompt: "p", cron: "0 9 * * *" }, { userRole: "user" });
    expect(task.user_role).toBe("user");
    expect((await scheduler.get("alice", task.id)).user_role).toBe("user");
    expect((await contextOfRun(task.id))?.user_role).toBe("user");
  });

  it("migrates a task stored before scheduler/004-task-role to no role, so its runs act with default_role", async () => {
    const before = await h.kernel.openDatabase({ migrations: schedulerMigrations.slice(0, 3) });
    const at = new Date().toISOString();
    // The row as the first three migrations' schema holds it: there is no user_role column yet.
    await sql`insert into ${sql.table(TASKS_TABLE)} (id, owner_user_id, kind, cron, timezone, prompt, thread_policy, context,
        state, overlap_policy, next_fire_at, run_count, created_at, updated_at)
      values ('task_legacy', 'alice', 'cron', '0 9 * * *', 'UTC', 'p', 'new', '{}', 'active', 'skip', '2099-01-01T09:00:00.000Z', 0,
        ${at}, ${at})`.execute(before.db);
    await before.close();
    expect((await scheduler.get("alice", "task_legacy")).user_role).toBeNull();
    const context = await contextOfRun("task_legacy");
    expect(context).toBeDefined();
    expect(context).not.toHaveProperty("user_role");
  });
}
