import { createHash, randomInt } from "node:crypto";
import type { AntlerDatabase, Migration } from "@antler/kernel";
import type { Kysely } from "kysely";
import type { InboundMessage } from "./contract.js";

/** `received` → `processing` (leased) → `answered` | `ignored` | `failed`. Timestamps are ISO-8601 UTC text. */
export type ChannelEventStatus = "received" | "processing" | "answered" | "ignored" | "failed";

export interface ChannelEventRow {
  /** `<provider>:<event id>`: the deduplication key. */
  id: string;
  provider: string;
  event_id: string;
  /** The InboundMessage as JSON. */
  payload: string;
  status: ChannelEventStatus;
  trace_id: string;
  user_id: string | null;
  thread_id: string | null;
  /** The run this event started (chosen before it starts, so a restart can tell whether it finished). */
  run_id: string | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
  attempts: number;
  error: string | null;
  created_at: string;
  updated_at: string;
}

export interface ChannelBindingRow {
  /** `<provider>:<platform user id>`. */
  id: string;
  provider: string;
  platform_user_id: string;
  user_id: string;
  created_at: string;
}

export interface ChannelConnectCodeRow {
  /** SHA-256 of the normalized code: the code itself is never stored. */
  code_hash: string;
  provider: string;
  user_id: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

export interface ChannelConversationRow {
  /** `<provider>:<workspace>:<chat>:<thread>:<user>`. */
  id: string;
  provider: string;
  chat_id: string;
  user_id: string;
  thread_id: string;
  agent: string | null;
  model: string | null;
  /** JSON `{ message_id, options }` of the clarification whose buttons are live, or null. */
  pending_question: string | null;
  created_at: string;
  updated_at: string;
}

export interface ChannelOutboxRow {
  /** `<event row id>#<slot>`: one platform message per slot of an answer. */
  id: string;
  message_id: string;
  created_at: string;
}

export type ChannelTables = {
  channel_events: ChannelEventRow;
  channel_bindings: ChannelBindingRow;
  channel_connect_codes: ChannelConnectCodeRow;
  channel_conversations: ChannelConversationRow;
  channel_outbox: ChannelOutboxRow;
};

/** Applied with the kernel's `openDatabase({ migrations })`; names are stable, never rename. */
export const channelMigrations: readonly Migration[] = [
  {
    name: "channels/001-tables",
    async up(db) {
      await db.schema
        .createTable("channel_events")
        .ifNotExists()
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("provider", "text", (c) => c.notNull())
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("payload", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("trace_id", "text", (c) => c.notNull())
        .addColumn("user_id", "text")
        .addColumn("thread_id", "text")
        .addColumn("run_id", "text")
        .addColumn("lease_owner", "text")
        .addColumn("lease_expires_at", "text")
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("error", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("channel_events_open")
        .ifNotExists()
        .on("channel_events")
        .columns(["status", "lease_expires_at"])
        .execute();
      await db.schema
        .createTable("channel_bindings")
        .ifNotExists()
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("provider", "text", (c) => c.notNull())
        .addColumn("platform_user_id", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("channel_connect_codes")
        .ifNotExists()
        .addColumn("code_hash", "text", (c) => c.primaryKey())
        .addColumn("provider", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .addColumn("used_at", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("channel_conversations")
        .ifNotExists()
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("provider", "text", (c) => c.notNull())
        .addColumn("chat_id", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("thread_id", "text", (c) => c.notNull())
        .addColumn("agent", "text")
        .addColumn("model", "text")
        .addColumn("pending_question", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("channel_outbox")
        .ifNotExists()
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("message_id", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
    },
  },
];

const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/** Upper case, no separators or spaces: `7kq2 m9xd` and `7KQ2-M9XD` are the same code. */
export function normalizeConnectCode(code: string): string {
  return code.toUpperCase().replace(/[^A-Z0-9]/g, "");
}

function hashCode(code: string): string {
  return createHash("sha256").update(normalizeConnectCode(code)).digest("hex");
}

function conversationKey(provider: string, chat: InboundMessage["chat"], userId: string): string {
  return [provider, chat.workspace ?? "", chat.id, chat.thread ?? "", userId].map((p) => encodeURIComponent(p)).join(":");
}

/** The channels' tables in the kernel's SQL store (SQLite or PostgreSQL), opened on first use. */
export class ChannelStore {
  private database: Promise<AntlerDatabase> | undefined;

  constructor(
    private readonly open: () => Promise<AntlerDatabase>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async db(): Promise<Kysely<ChannelTables>> {
    this.database ??= this.open();
    this.database.catch(() => {
      this.database = undefined;
    });
    return (await this.database).db as unknown as Kysely<ChannelTables>;
  }

  private iso(offsetMs = 0): string {
    return new Date(this.now().getTime() + offsetMs).toISOString();
  }

  /** Journals an event; false when `<provider>:<eventId>` was journaled before (a platform retry). */
  async record(provider: string, message: InboundMessage, traceId: string): Promise<boolean> {
    const db = await this.db();
    const now = this.iso();
    const result = await db
      .insertInto("channel_events")
      .values({
        id: `${provider}:${message.eventId}`,
        provider,
        event_id: message.eventId,
        payload: JSON.stringify(message),
        status: "received",
        trace_id: traceId,
        user_id: null,
        thread_id: null,
        run_id: null,
        lease_owner: null,
        lease_expires_at: null,
        attempts: 0,
        error: null,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.column("id").doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  /**
   * Takes an event to handle: a `received` one, or a `processing` one whose lease ran out (its instance died).
   * Only one caller wins; the lease lasts `leaseMs` and is renewed while the event is handled.
   */
  async claim(id: string, owner: string, leaseMs: number): Promise<ChannelEventRow | undefined> {
    const db = await this.db();
    const now = this.iso();
    const result = await db
      .updateTable("channel_events")
      .set((eb) => ({
        status: "processing",
        lease_owner: owner,
        lease_expires_at: this.iso(leaseMs),
        attempts: eb("attempts", "+", 1),
        updated_at: now,
      }))
      .where("id", "=", id)
      .where((eb) => eb.or([eb("status", "=", "received"), eb.and([eb("status", "=", "processing"), eb("lease_expires_at", "<", now)])]))
      .executeTakeFirst();
    if (Number(result.numUpdatedRows ?? 0n) !== 1) return undefined;
    return db.selectFrom("channel_events").selectAll().where("id", "=", id).executeTakeFirst();
  }

  async renew(id: string, owner: string, leaseMs: number): Promise<void> {
    const db = await this.db();
    await db
      .updateTable("channel_events")
      .set({ lease_expires_at: this.iso(leaseMs) })
      .where("id", "=", id)
      .where("lease_owner", "=", owner)
      .where("status", "=", "processing")
      .execute();
  }

  /** Events to (re)handle: never claimed, or claimed by an instance whose lease ran out. Oldest first. */
  async openEvents(limit: number): Promise<ChannelEventRow[]> {
    const db = await this.db();
    const now = this.iso();
    return db
      .selectFrom("channel_events")
      .selectAll()
      .where((eb) => eb.or([eb("status", "=", "received"), eb.and([eb("status", "=", "processing"), eb("lease_expires_at", "<", now)])]))
      .orderBy("created_at")
      .limit(limit)
      .execute();
  }

  async update(id: string, fields: Partial<Pick<ChannelEventRow, "user_id" | "thread_id" | "run_id" | "error">>): Promise<void> {
    const db = await this.db();
    await db
      .updateTable("channel_events")
      .set({ ...fields, updated_at: this.iso() })
      .where("id", "=", id)
      .execute();
  }

  async finish(id: string, status: "answered" | "ignored" | "failed", error?: string): Promise<void> {
    const db = await this.db();
    await db
      .updateTable("channel_events")
      .set({ status, lease_owner: null, lease_expires_at: null, error: error?.slice(0, 2000) ?? null, updated_at: this.iso() })
      .where("id", "=", id)
      .execute();
  }

  /**
   * Deletes handled events (answered, ignored, failed) journaled before `before`, outbox entries written before it,
   * and expired connect codes: the journal holds message text, and a table that only grows makes every scan slower.
   */
  async prune(before: Date, limit = 500): Promise<number> {
    const db = await this.db();
    const cutoff = before.toISOString();
    const old = await db
      .selectFrom("channel_events")
      .select("id")
      .where("status", "in", ["answered", "ignored", "failed"])
      .where("created_at", "<", cutoff)
      .limit(limit)
      .execute();
    if (old.length > 0) {
      await db
        .deleteFrom("channel_events")
        .where(
          "id",
          "in",
          old.map((r) => r.id),
        )
        .execute();
    }
    // Outbox entries matter only while their answer may be retried, which ends long before this.
    await db.deleteFrom("channel_outbox").where("created_at", "<", cutoff).execute();
    await db.deleteFrom("channel_connect_codes").where("expires_at", "<", this.iso()).execute();
    return old.length;
  }

  async event(provider: string, eventId: string): Promise<ChannelEventRow | undefined> {
    const db = await this.db();
    return db.selectFrom("channel_events").selectAll().where("id", "=", `${provider}:${eventId}`).executeTakeFirst();
  }

  /** A one-time code for `/connect <code>`, shown once; only its hash is stored. */
  async issueConnectCode(provider: string, userId: string, ttlMs: number): Promise<{ code: string; expiresAt: string }> {
    const raw = Array.from({ length: 8 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join("");
    const code = `${raw.slice(0, 4)}-${raw.slice(4)}`;
    const expiresAt = this.iso(ttlMs);
    const db = await this.db();
    await db
      .insertInto("channel_connect_codes")
      .values({ code_hash: hashCode(code), provider, user_id: userId, expires_at: expiresAt, used_at: null, created_at: this.iso() })
      .execute();
    return { code, expiresAt };
  }

  /** Uses up a code and binds the platform user; undefined when the code is unknown, used, expired or another provider's. */
  async redeemConnectCode(provider: string, code: string, platformUserId: string): Promise<string | undefined> {
    const db = await this.db();
    const now = this.iso();
    const hash = hashCode(code);
    const taken = await db
      .updateTable("channel_connect_codes")
      .set({ used_at: now })
      .where("code_hash", "=", hash)
      .where("provider", "=", provider)
      .where("used_at", "is", null)
      .where("expires_at", ">", now)
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows ?? 0n) !== 1) return undefined;
    const row = await db.selectFrom("channel_connect_codes").select("user_id").where("code_hash", "=", hash).executeTakeFirstOrThrow();
    await this.bind(provider, platformUserId, row.user_id);
    return row.user_id;
  }

  async bind(provider: string, platformUserId: string, userId: string): Promise<void> {
    const db = await this.db();
    await db
      .insertInto("channel_bindings")
      .values({ id: `${provider}:${platformUserId}`, provider, platform_user_id: platformUserId, user_id: userId, created_at: this.iso() })
      .onConflict((oc) => oc.column("id").doUpdateSet({ user_id: userId }))
      .execute();
  }

  async binding(provider: string, platformUserId: string): Promise<ChannelBindingRow | undefined> {
    const db = await this.db();
    return db.selectFrom("channel_bindings").selectAll().where("id", "=", `${provider}:${platformUserId}`).executeTakeFirst();
  }

  async bindings(provider?: string): Promise<ChannelBindingRow[]> {
    const db = await this.db();
    let query = db.selectFrom("channel_bindings").selectAll().orderBy("created_at");
    if (provider) query = query.where("provider", "=", provider);
    return query.execute();
  }

  async unbind(provider: string, platformUserId: string): Promise<boolean> {
    const db = await this.db();
    const result = await db.deleteFrom("channel_bindings").where("id", "=", `${provider}:${platformUserId}`).executeTakeFirst();
    return Number(result.numDeletedRows ?? 0n) === 1;
  }

  async conversation(provider: string, chat: InboundMessage["chat"], userId: string): Promise<ChannelConversationRow | undefined> {
    const db = await this.db();
    return db
      .selectFrom("channel_conversations")
      .selectAll()
      .where("id", "=", conversationKey(provider, chat, userId))
      .executeTakeFirst();
  }

  /**
   * The chats (with their workspace and platform thread) where `userId` has a conversation with `provider` in the
   * chat `chatId`, whatever the workspace: a push that names no workspace is resolved from these.
   */
  async conversationChats(provider: string, chatId: string, userId: string): Promise<Array<{ workspace?: string; thread?: string }>> {
    const db = await this.db();
    const rows = await db
      .selectFrom("channel_conversations")
      .select("id")
      .where("provider", "=", provider)
      .where("chat_id", "=", chatId)
      .where("user_id", "=", userId)
      .execute();
    return rows.map((row) => {
      const [, workspace = "", , thread = ""] = row.id.split(":").map((part) => decodeURIComponent(part));
      return { ...(workspace ? { workspace } : {}), ...(thread ? { thread } : {}) };
    });
  }

  /** Points the conversation at `threadId` (a new one with `/new`), keeping its agent and model. */
  async saveConversation(
    provider: string,
    chat: InboundMessage["chat"],
    userId: string,
    fields: Partial<Pick<ChannelConversationRow, "thread_id" | "agent" | "model" | "pending_question">> & { thread_id: string },
  ): Promise<void> {
    const db = await this.db();
    const now = this.iso();
    const id = conversationKey(provider, chat, userId);
    await db
      .insertInto("channel_conversations")
      .values({
        id,
        provider,
        chat_id: chat.id,
        user_id: userId,
        thread_id: fields.thread_id,
        agent: fields.agent ?? null,
        model: fields.model ?? null,
        pending_question: fields.pending_question ?? null,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.column("id").doUpdateSet({ ...fields, updated_at: now }))
      .execute();
  }

  async outboxGet(id: string): Promise<string | undefined> {
    const db = await this.db();
    return (await db.selectFrom("channel_outbox").select("message_id").where("id", "=", id).executeTakeFirst())?.message_id;
  }

  async outboxPut(id: string, messageId: string): Promise<void> {
    const db = await this.db();
    await db
      .insertInto("channel_outbox")
      .values({ id, message_id: messageId, created_at: this.iso() })
      .onConflict((oc) => oc.column("id").doNothing())
      .execute();
  }

  async close(): Promise<void> {
    const database = await this.database?.catch(() => undefined);
    this.database = undefined;
    await database?.close();
  }
}
