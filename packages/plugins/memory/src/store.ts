import { createHash } from "node:crypto";
import type { AntlerDatabase, Migration, SqlDialect } from "@antler/kernel";
import { type CompiledQuery, type Kysely, sql, type Transaction } from "kysely";
import { EMPTY_HISTORY, EMPTY_PROFILE, type MemoryHistory, type MemoryProfile, newFactId } from "./records.js";
import { fts5Query, MAX_TERM_DOCS, queryTerms } from "./search-terms.js";

export { EMPTY_HISTORY, EMPTY_PROFILE, type MemoryHistory, type MemoryProfile, newFactId };

export const FACTS_TABLE = "memory_facts";
export const PROFILES_TABLE = "memory_profiles";
export const VERSIONS_TABLE = "memory_versions";
const FTS_TABLE = "memory_facts_fts";

/** Timestamps are ISO-8601 UTC text, so they order as strings on SQLite and PostgreSQL alike. */
export type MemoryFactsTable = {
  id: string;
  user_id: string;
  /** The custom agent the fact belongs to; "" is the user's default memory. */
  agent_name: string;
  /** A digits-only token naming (user, agent) inside the SQLite full-text index, so a search reads one scope. */
  scope: string;
  content: string;
  category: string;
  confidence: number;
  source: string;
  created_at: string;
  updated_at: string;
};

export type MemoryProfilesTable = {
  user_id: string;
  agent_name: string;
  work_context: string;
  personal_context: string;
  top_of_mind: string;
  recent_months: string;
  earlier_context: string;
  long_term_background: string;
  last_extraction_at: string | null;
  updated_at: string;
};

/** A scope's write counter: the database bumps it on every insert, update and delete of the scope's facts or profile. */
export type MemoryVersionsTable = {
  user_id: string;
  agent_name: string;
  version: number | string;
};

export type MemoryTables = {
  memory_facts: MemoryFactsTable;
  memory_profiles: MemoryProfilesTable;
  memory_versions: MemoryVersionsTable;
};

/** One remembered fact, as every surface (client, HTTP, CLI, tools) shows it. */
export interface MemoryFact {
  id: string;
  content: string;
  category: string;
  confidence: number;
  source: string;
  created_at: string;
  updated_at: string;
}

/** Who a memory belongs to: a user, and optionally one of their custom agents ("" = the default memory). */
export interface MemoryScope {
  userId: string;
  agentName: string;
}

/** The scope's token in the SQLite full-text index: digits only, so no tokenizer or stemmer can change it. */
export function scopeToken(scope: MemoryScope): string {
  const digest = createHash("sha256").update(scope.userId).update("\0").update(scope.agentName).digest();
  return `${digest.readBigUInt64BE(0)}${digest.readBigUInt64BE(8)}`;
}

function factsColumns(table: ReturnType<Kysely<unknown>["schema"]["createTable"]>) {
  return table
    .addColumn("id", "text", (c) => c.notNull().unique())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("agent_name", "text", (c) => c.notNull())
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("category", "text", (c) => c.notNull())
    .addColumn("confidence", "double precision", (c) => c.notNull())
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull());
}

/**
 * Memory's tables for one dialect (names are stable; never rename). Full-text retrieval is the one part that
 * cannot be portable: SQLite gets an FTS5 index kept in step by triggers, PostgreSQL a generated `tsvector`
 * column with a GIN index. Both stem English words, and queries drop the same stop words on both.
 */
export function memoryMigrations(dialect: SqlDialect): Migration[] {
  return [
    {
      name: "memory/001-profiles",
      async up(db) {
        await db.schema
          .createTable(PROFILES_TABLE)
          .addColumn("user_id", "text", (c) => c.notNull())
          .addColumn("agent_name", "text", (c) => c.notNull())
          .addColumn("work_context", "text", (c) => c.notNull().defaultTo(""))
          .addColumn("personal_context", "text", (c) => c.notNull().defaultTo(""))
          .addColumn("top_of_mind", "text", (c) => c.notNull().defaultTo(""))
          .addColumn("recent_months", "text", (c) => c.notNull().defaultTo(""))
          .addColumn("earlier_context", "text", (c) => c.notNull().defaultTo(""))
          .addColumn("long_term_background", "text", (c) => c.notNull().defaultTo(""))
          .addColumn("last_extraction_at", "text")
          .addColumn("updated_at", "text", (c) => c.notNull())
          .addPrimaryKeyConstraint("memory_profiles_pk", ["user_id", "agent_name"])
          .execute();
      },
    },
    {
      name: "memory/002-facts",
      async up(db) {
        if (dialect === "sqlite") {
          // An INTEGER PRIMARY KEY is SQLite's rowid and survives VACUUM, so the FTS index can point at it.
          await factsColumns(db.schema.createTable(FACTS_TABLE).addColumn("seq", "integer", (c) => c.primaryKey())).execute();
          await sql`create virtual table ${sql.table(FTS_TABLE)} using fts5(scope, content, content=${sql.lit(FACTS_TABLE)}, content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2')`.execute(
            db,
          );
          await sql`create trigger memory_facts_ai after insert on ${sql.table(FACTS_TABLE)} begin
            insert into ${sql.table(FTS_TABLE)}(rowid, scope, content) values (new.seq, new.scope, new.content); end`.execute(db);
          await sql`create trigger memory_facts_ad after delete on ${sql.table(FACTS_TABLE)} begin
            insert into ${sql.table(FTS_TABLE)}(${sql.table(FTS_TABLE)}, rowid, scope, content) values ('delete', old.seq, old.scope, old.content); end`.execute(
            db,
          );
          await sql`create trigger memory_facts_au after update of scope, content on ${sql.table(FACTS_TABLE)} begin
            insert into ${sql.table(FTS_TABLE)}(${sql.table(FTS_TABLE)}, rowid, scope, content) values ('delete', old.seq, old.scope, old.content);
            insert into ${sql.table(FTS_TABLE)}(rowid, scope, content) values (new.seq, new.scope, new.content); end`.execute(db);
        } else {
          await factsColumns(db.schema.createTable(FACTS_TABLE).addColumn("seq", "bigserial", (c) => c.primaryKey())).execute();
          await sql`alter table ${sql.table(FACTS_TABLE)} add column search tsvector generated always as (to_tsvector('english', content)) stored`.execute(
            db,
          );
          await sql`create index memory_facts_search on ${sql.table(FACTS_TABLE)} using gin (search)`.execute(db);
        }
        // Serves listing a scope's facts (newest first) and every per-scope filter.
        await db.schema.createIndex("memory_facts_scope").on(FACTS_TABLE).columns(["user_id", "agent_name", "updated_at"]).execute();
      },
    },
    {
      // Triggers, not the store's write methods, keep the counter: no writer (an import, another instance, a
      // manual fix in SQL) can change facts or a profile without the cached snapshots of every instance noticing.
      name: "memory/003-versions",
      async up(db) {
        await db.schema
          .createTable(VERSIONS_TABLE)
          .addColumn("user_id", "text", (c) => c.notNull())
          .addColumn("agent_name", "text", (c) => c.notNull())
          .addColumn("version", "bigint", (c) => c.notNull())
          .addPrimaryKeyConstraint("memory_versions_pk", ["user_id", "agent_name"])
          .execute();
        const bump = (row: "new" | "old") =>
          sql.raw(`insert into ${VERSIONS_TABLE} (user_id, agent_name, version) values (${row}.user_id, ${row}.agent_name, 1)
            on conflict (user_id, agent_name) do update set version = ${VERSIONS_TABLE}.version + 1`);
        if (dialect === "sqlite") {
          for (const [table, tag] of [
            [FACTS_TABLE, "f"],
            [PROFILES_TABLE, "p"],
          ] as const) {
            await sql`create trigger ${sql.raw(`memory_versions_${tag}i`)} after insert on ${sql.table(table)} begin ${bump("new")}; end`.execute(
              db,
            );
            await sql`create trigger ${sql.raw(`memory_versions_${tag}d`)} after delete on ${sql.table(table)} begin ${bump("old")}; end`.execute(
              db,
            );
            // An update that moves a row to another scope bumps both.
            const update = sql`create trigger ${sql.raw(`memory_versions_${tag}u`)} after update on ${sql.table(table)}`;
            await sql`${update} begin ${bump("old")}; ${bump("new")}; end`.execute(db);
          }
        } else {
          await sql`create function memory_versions_bump() returns trigger language plpgsql as $$ begin
            if tg_op <> 'INSERT' then ${bump("old")}; end if;
            if tg_op <> 'DELETE' then ${bump("new")}; end if;
            return null; end $$`.execute(db);
          for (const table of [FACTS_TABLE, PROFILES_TABLE]) {
            await sql`create trigger memory_versions_bump after insert or update or delete on ${sql.table(table)}
              for each row execute function memory_versions_bump()`.execute(db);
          }
        }
      },
    },
  ];
}

export interface NewFact {
  id?: string;
  content: string;
  category: string;
  confidence: number;
  source: string;
  created_at?: string;
  updated_at?: string;
}

export interface FactPatch {
  content?: string;
  category?: string;
  confidence?: number;
}

export interface SearchHit extends MemoryFact {
  /** Higher is more relevant (SQLite: -bm25; PostgreSQL: ts_rank). */
  score: number;
}

type Db = Kysely<MemoryTables> | Transaction<MemoryTables>;

const FACT_COLUMNS = ["id", "content", "category", "confidence", "source", "created_at", "updated_at"] as const;

/** Per database, the writes made through every MemoryStore of this process (see `MemoryStore.localWrites`). */
const localWrites = new WeakMap<AntlerDatabase, { count: number }>();

/**
 * Memory rows on the kernel's SQL database. Every read and write takes the scope, so another user's (or agent's)
 * fact behaves exactly like a missing one. Content reaching this layer is already redacted by the service.
 */
export class MemoryStore {
  readonly db: Kysely<MemoryTables>;
  readonly dialect: SqlDialect;
  /** `version` runs before every injected lookup: built and compiled once, run with each scope's values. */
  private readonly versionQuery: CompiledQuery<{ version: number | string }>;
  private readonly writes: { count: number };

  constructor(database: AntlerDatabase) {
    const writes = localWrites.get(database) ?? { count: 0 };
    localWrites.set(database, writes);
    this.writes = writes;
    this.db = database.db.withTables<MemoryTables>() as unknown as Kysely<MemoryTables>;
    this.dialect = database.dialect;
    this.versionQuery = this.db
      .selectFrom(VERSIONS_TABLE)
      .select("version")
      .where("user_id", "=", "")
      .where("agent_name", "=", "")
      .compile();
  }

  /**
   * Moves after every write method and transaction of any MemoryStore of this process on this database has ended
   * (committed, rolled back or failed). A count read before a version read that is still the same later means this
   * process has changed nothing since: what lets a lookup skip the version read for a while.
   */
  get localWrites(): number {
    return this.writes.count;
  }

  private async written<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      this.writes.count++;
    }
  }

  transaction<T>(fn: (db: Transaction<MemoryTables>) => Promise<T>): Promise<T> {
    return this.written(() => this.db.transaction().execute(fn));
  }

  async profile(scope: MemoryScope, db: Db = this.db): Promise<MemoryProfilesTable | undefined> {
    return db
      .selectFrom(PROFILES_TABLE)
      .selectAll()
      .where("user_id", "=", scope.userId)
      .where("agent_name", "=", scope.agentName)
      .executeTakeFirst();
  }

  /** The scope's write counter (0 before its first fact): equal counters mean equal facts. */
  async version(scope: MemoryScope): Promise<number> {
    const { rows } = await this.db.executeQuery<{ version: number | string }>({
      ...this.versionQuery,
      parameters: [scope.userId, scope.agentName],
    });
    return Number(rows[0]?.version ?? 0);
  }

  saveProfile(
    scope: MemoryScope,
    fields: Partial<MemoryProfile & MemoryHistory> & { last_extraction_at?: string | null },
    db: Db = this.db,
  ): Promise<void> {
    return this.written(async () => {
      const now = new Date().toISOString();
      const existing = await this.profile(scope, db);
      if (existing) {
        await db
          .updateTable(PROFILES_TABLE)
          .set({ ...fields, updated_at: now })
          .where("user_id", "=", scope.userId)
          .where("agent_name", "=", scope.agentName)
          .execute();
        return;
      }
      await db
        .insertInto(PROFILES_TABLE)
        .values({
          user_id: scope.userId,
          agent_name: scope.agentName,
          ...EMPTY_PROFILE,
          ...EMPTY_HISTORY,
          last_extraction_at: null,
          ...fields,
          updated_at: now,
        })
        .execute();
    });
  }

  async listFacts(scope: MemoryScope, options: { limit?: number; category?: string } = {}, db: Db = this.db): Promise<MemoryFact[]> {
    let query = db
      .selectFrom(FACTS_TABLE)
      .select(FACT_COLUMNS)
      .where("user_id", "=", scope.userId)
      .where("agent_name", "=", scope.agentName);
    if (options.category) query = query.where("category", "=", options.category);
    query = query.orderBy("updated_at", "desc").orderBy("id");
    if (options.limit !== undefined) query = query.limit(options.limit);
    return (await query.execute()).map(fact);
  }

  async countFacts(scope: MemoryScope, db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom(FACTS_TABLE)
      .select((eb) => eb.fn.countAll<number | string | bigint>().as("n"))
      .where("user_id", "=", scope.userId)
      .where("agent_name", "=", scope.agentName)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async getFact(scope: MemoryScope, id: string, db: Db = this.db): Promise<MemoryFact | undefined> {
    const row = await db
      .selectFrom(FACTS_TABLE)
      .select(FACT_COLUMNS)
      .where("id", "=", id)
      .where("user_id", "=", scope.userId)
      .where("agent_name", "=", scope.agentName)
      .executeTakeFirst();
    return row ? fact(row) : undefined;
  }

  insertFacts(scope: MemoryScope, facts: readonly NewFact[], db: Db = this.db): Promise<MemoryFact[]> {
    return this.written(async () => {
      if (facts.length === 0) return [];
      const now = new Date().toISOString();
      const token = scopeToken(scope);
      const rows = facts.map((f) => ({
        id: f.id ?? newFactId(),
        user_id: scope.userId,
        agent_name: scope.agentName,
        scope: token,
        content: f.content,
        category: f.category,
        confidence: f.confidence,
        source: f.source,
        created_at: f.created_at ?? now,
        updated_at: f.updated_at ?? f.created_at ?? now,
      }));
      // Bounded statements: SQLite allows 32k bound values, PostgreSQL 65k.
      for (let i = 0; i < rows.length; i += 500)
        await db
          .insertInto(FACTS_TABLE)
          .values(rows.slice(i, i + 500))
          .execute();
      return rows.map(fact);
    });
  }

  updateFact(scope: MemoryScope, id: string, patch: FactPatch, db: Db = this.db): Promise<MemoryFact | undefined> {
    return this.written(async () => {
      const set: Partial<MemoryFactsTable> = { updated_at: new Date().toISOString() };
      if (patch.content !== undefined) set.content = patch.content;
      if (patch.category !== undefined) set.category = patch.category;
      if (patch.confidence !== undefined) set.confidence = patch.confidence;
      const result = await db
        .updateTable(FACTS_TABLE)
        .set(set)
        .where("id", "=", id)
        .where("user_id", "=", scope.userId)
        .where("agent_name", "=", scope.agentName)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return undefined;
      return this.getFact(scope, id, db);
    });
  }

  deleteFacts(scope: MemoryScope, ids: readonly string[], db: Db = this.db): Promise<number> {
    return this.written(async () => {
      if (ids.length === 0) return 0;
      const result = await db
        .deleteFrom(FACTS_TABLE)
        .where("id", "in", [...ids])
        .where("user_id", "=", scope.userId)
        .where("agent_name", "=", scope.agentName)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    });
  }

  /** Deletes the scope's facts and profile. */
  clear(scope: MemoryScope, db: Db = this.db): Promise<void> {
    return this.written(async () => {
      await db.deleteFrom(FACTS_TABLE).where("user_id", "=", scope.userId).where("agent_name", "=", scope.agentName).execute();
      await db.deleteFrom(PROFILES_TABLE).where("user_id", "=", scope.userId).where("agent_name", "=", scope.agentName).execute();
    });
  }

  /** Keeps the `max` most confident (then newest) facts of the scope; returns how many were evicted. */
  async evictBeyond(scope: MemoryScope, max: number, db: Db = this.db): Promise<number> {
    const count = await this.countFacts(scope, db);
    if (count <= max) return 0;
    const victims = await db
      .selectFrom(FACTS_TABLE)
      .select("id")
      .where("user_id", "=", scope.userId)
      .where("agent_name", "=", scope.agentName)
      .orderBy("confidence", "asc")
      .orderBy("updated_at", "asc")
      .limit(count - max)
      .execute();
    return this.deleteFacts(
      scope,
      victims.map((v) => v.id),
      db,
    );
  }

  /** `terms` without those in more than MAX_TERM_DOCS facts (all users), or the rarest if that leaves none. */
  private async selectiveTerms(terms: readonly string[]): Promise<string[]> {
    const counted: Array<{ term: string; docs: number }> = [];
    for (const term of terms) {
      // Counting walks the term's doclist without scoring or joining: cheap even for a common term.
      const { rows } = await sql<{ docs: number }>`
        select count(*) as docs from ${sql.table(FTS_TABLE)} where ${sql.table(FTS_TABLE)} match ${`content:(${fts5Query([term])})`}`.execute(
        this.db,
      );
      counted.push({ term, docs: Number(rows[0]?.docs ?? 0) });
    }
    const selective = counted.filter((c) => c.docs > 0 && c.docs <= MAX_TERM_DOCS).map((c) => c.term);
    if (selective.length > 0) return selective;
    const rarest = counted.filter((c) => c.docs > 0).sort((a, b) => a.docs - b.docs)[0];
    return rarest ? [rarest.term] : [...terms];
  }

  /**
   * The scope's facts most relevant to `text` by full-text rank, at most `limit`: one indexed query. A text with
   * no searchable words finds nothing.
   */
  async search(scope: MemoryScope, text: string, options: { limit: number; category?: string | undefined }): Promise<SearchHit[]> {
    const terms = queryTerms(text);
    if (terms.length === 0 || options.limit <= 0) return [];
    const category = options.category;
    if (this.dialect === "sqlite") {
      // Only the content column is searched; the join filters the scope. (ANDing the scope token into the match
      // reads the scope's whole doclist, 10,000 entries for a big memory: measured 5× slower per query.)
      const match = `content:(${fts5Query(await this.selectiveTerms(terms))})`;
      const result = await sql<MemoryFact & { score: number }>`
        select f.id, f.content, f.category, f.confidence, f.source, f.created_at, f.updated_at, -bm25(${sql.table(FTS_TABLE)}) as score
        from ${sql.table(FTS_TABLE)} join ${sql.table(FACTS_TABLE)} f on f.seq = ${sql.table(FTS_TABLE)}.rowid
        where ${sql.table(FTS_TABLE)} match ${match} and f.user_id = ${scope.userId} and f.agent_name = ${scope.agentName}
        ${category ? sql`and f.category = ${category}` : sql``}
        order by bm25(${sql.table(FTS_TABLE)}), f.confidence desc
        limit ${options.limit}`.execute(this.db);
      return result.rows.map(hit);
    }
    const tsquery = terms.join(" | ");
    const result = await sql<MemoryFact & { score: number }>`
      select id, content, category, confidence, source, created_at, updated_at, ts_rank(search, q) as score
      from ${sql.table(FACTS_TABLE)}, to_tsquery('english', ${tsquery}) q
      where search @@ q and user_id = ${scope.userId} and agent_name = ${scope.agentName}
      ${category ? sql`and category = ${category}` : sql``}
      order by score desc, confidence desc
      limit ${options.limit}`.execute(this.db);
    return result.rows.map(hit);
  }
}

function fact(row: Pick<MemoryFactsTable, (typeof FACT_COLUMNS)[number]>): MemoryFact {
  return {
    id: row.id,
    content: row.content,
    category: row.category,
    confidence: Number(row.confidence),
    source: row.source,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function hit(row: MemoryFact & { score: number }): SearchHit {
  return { ...fact(row), score: Number(row.score) };
}
