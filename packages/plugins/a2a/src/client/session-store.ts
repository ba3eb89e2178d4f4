import type { AntlerDatabase, Migration } from "@antler/kernel";
import type { Kysely } from "kysely";

/**
 * What one Antler thread has going with one remote agent: the remote context its calls continue, and the task
 * that waits for input (`input-required`), which the next call answers instead of starting a new task.
 */
export interface A2ARemoteSessionRow {
  thread_id: string;
  agent: string;
  context_id: string;
  /** The remote task waiting for input; null when none does. */
  pending_task_id: string | null;
  last_task_id: string | null;
  updated_at: string;
}

export const A2A_REMOTE_SESSIONS_TABLE = "a2a_remote_sessions";

type Tables = { a2a_remote_sessions: A2ARemoteSessionRow };

/** Applied with the kernel's `openDatabase({ migrations })`; names are stable, never rename. */
export const a2aClientMigrations: readonly Migration[] = [
  {
    name: "a2a/101-remote-sessions",
    async up(db) {
      await db.schema
        .createTable(A2A_REMOTE_SESSIONS_TABLE)
        .ifNotExists()
        .addColumn("thread_id", "text", (c) => c.notNull())
        .addColumn("agent", "text", (c) => c.notNull())
        .addColumn("context_id", "text", (c) => c.notNull())
        .addColumn("pending_task_id", "text")
        .addColumn("last_task_id", "text")
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("a2a_remote_sessions_pk", ["thread_id", "agent"])
        .execute();
    },
  },
];

/** The remote sessions in the kernel's SQL store, so a follow-up call works from any instance and after a restart. */
export class A2ARemoteSessionStore {
  private database: Promise<AntlerDatabase> | undefined;

  constructor(private readonly open: () => Promise<AntlerDatabase>) {}

  private async db(): Promise<Kysely<Tables>> {
    this.database ??= this.open();
    this.database.catch(() => {
      this.database = undefined;
    });
    return (await this.database).db as unknown as Kysely<Tables>;
  }

  async get(threadId: string, agent: string): Promise<A2ARemoteSessionRow | undefined> {
    const db = await this.db();
    return db
      .selectFrom(A2A_REMOTE_SESSIONS_TABLE)
      .selectAll()
      .where("thread_id", "=", threadId)
      .where("agent", "=", agent)
      .executeTakeFirst();
  }

  async put(row: Omit<A2ARemoteSessionRow, "updated_at">): Promise<void> {
    const db = await this.db();
    const updated_at = new Date().toISOString();
    await db
      .insertInto(A2A_REMOTE_SESSIONS_TABLE)
      .values({ ...row, updated_at })
      .onConflict((oc) =>
        oc.columns(["thread_id", "agent"]).doUpdateSet({
          context_id: row.context_id,
          pending_task_id: row.pending_task_id,
          last_task_id: row.last_task_id,
          updated_at,
        }),
      )
      .execute();
  }

  async close(): Promise<void> {
    const database = await this.database?.catch(() => undefined);
    this.database = undefined;
    await database?.close();
  }
}
