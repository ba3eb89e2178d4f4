/** One logged event of a run: its SSE `id`, `event` name and `data` (JSON text, written once). */
export interface LoggedEvent {
  readonly seq: number;
  readonly event: string;
  readonly json: string;
}

/** An event on its way to the store. */
export interface PendingEvent extends LoggedEvent {
  readonly runId: string;
  /** When it happened (epoch ms): retention counts from it. */
  readonly at: number;
}

/** Follows one run's events in the store (a blocking Redis connection, or a polling loop over SQL). */
export interface EventTail {
  /** Events after `afterSeq`, oldest first; waits up to `waitMs` for the first one. Empty: none came. */
  next(afterSeq: number, limit: number, waitMs: number): Promise<LoggedEvent[]>;
  close(): void;
}

/**
 * Where run events are kept across instances. Writes come in batches, each run's events in order; reads are by
 * run and sequence number. Implementations: SQL (Antler's database) and Redis Streams.
 */
export interface RunEventStore {
  readonly kind: "sql" | "redis";
  /** Writes a batch (several runs, each in sequence order). Idempotent: an event already stored is skipped. */
  append(events: readonly PendingEvent[]): Promise<void>;
  /** Up to `limit` events of the run after `afterSeq`, oldest first. */
  read(runId: string, afterSeq: number, limit: number): Promise<LoggedEvent[]>;
  /** The lowest and highest sequence numbers stored for the run, or null when none are. */
  bounds(runId: string): Promise<{ first: number; last: number } | null>;
  tail(runId: string): EventTail;
  /** Keeps only the run's newest `keep` events up to `lastSeq`. */
  trim(runId: string, lastSeq: number, keep: number): Promise<void>;
  /**
   * Stores a finished run's events in fewer, larger records (what `read` returns is unchanged). Called once the
   * run's last event is written; optional (a Redis stream is compact already).
   */
  compact?(runId: string): Promise<void>;
  /** Deletes events written before `before`; returns how many (Redis streams expire on their own: 0). */
  prune(before: Date): Promise<number>;
  close(): Promise<void>;
}

/** The SSE event names that end a run's stream. */
export function isTerminal(event: string): boolean {
  return event === "end" || event === "error";
}
