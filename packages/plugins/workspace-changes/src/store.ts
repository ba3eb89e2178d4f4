import type { AntlerDatabase, Migration } from "@antler/kernel";
import type { Kysely } from "kysely";
import type { WorkspaceChanges } from "./changes.js";

/** `run_workspace_changes`: the `workspace_changes` record of each run, keyed by the run record's id. */
export type RunWorkspaceChangesTable = {
  run_id: string;
  thread_id: string;
  user_id: string;
  /** JSON of `WorkspaceChanges`. */
  changes: string;
  created_at: string;
};

type Tables = { run_workspace_changes: RunWorkspaceChangesTable };

export const workspaceChangesMigrations: readonly Migration[] = [
  {
    name: "workspace-changes/001-create",
    async up(db) {
      await db.schema
        .createTable("run_workspace_changes")
        .ifNotExists()
        .addColumn("run_id", "text", (c) => c.primaryKey())
        .addColumn("thread_id", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("changes", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
    },
  },
];

export class WorkspaceChangesStore {
  constructor(private readonly database: AntlerDatabase) {}

  private get db(): Kysely<Tables> {
    return this.database.db.withTables<Tables>() as unknown as Kysely<Tables>;
  }

  async save(userId: string, changes: WorkspaceChanges): Promise<void> {
    const row = {
      run_id: changes.run_id,
      thread_id: changes.thread_id,
      user_id: userId,
      changes: JSON.stringify(changes),
      created_at: new Date().toISOString(),
    };
    await this.db
      .insertInto("run_workspace_changes")
      .values(row)
      .onConflict((oc) => oc.column("run_id").doUpdateSet({ changes: row.changes }))
      .execute();
  }

  /** The run's record, only for its own user and thread (anything else reads as absent). */
  async get(userId: string, threadId: string, runId: string): Promise<WorkspaceChanges | undefined> {
    const row = await this.db
      .selectFrom("run_workspace_changes")
      .select("changes")
      .where("run_id", "=", runId)
      .where("thread_id", "=", threadId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    return row ? (JSON.parse(row.changes) as WorkspaceChanges) : undefined;
  }

  close(): Promise<void> {
    return this.database.close();
  }
}
