import type { Token } from "@antler/kernel";

/**
 * Cross-process wake-ups for the run queue, from the storage backend that has them: PostgreSQL's LISTEN/NOTIFY
 * (`@antler/plugin-storage-postgres` provides it). `listen` holds one connection of its own and calls `onNotify` for
 * each notification on `channel`; the function it resolves with stops listening. Provided under
 * `QUEUE_NOTIFICATIONS_TOKEN`; without it (SQLite), executors poll.
 */
export interface QueueNotifications {
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
}

/** A registry symbol, so the provider needs no import of this package. */
export const QUEUE_NOTIFICATIONS_TOKEN: Token<QueueNotifications> = Object.freeze({
  key: Symbol.for("@antler/plugin-runtime/queue-notifications"),
  name: "plugin-runtime.queue-notifications",
});

/** The channel queued runs are announced on: one per schema, so schemas sharing a database do not wake each other. */
export function queueChannel(schema: string | undefined): string {
  return schema ? `antler_runs_queued_${schema}` : "antler_runs_queued";
}
