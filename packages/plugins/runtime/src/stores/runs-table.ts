/** Timestamps are ISO-8601 UTC text and kwargs is JSON text, as in the threads table. */
export interface RunsTable {
  run_id: string;
  thread_id: string;
  user_id: string;
  status: string;
  trace_id: string;
  model: string;
  kwargs: string;
  error: string | null;
  created_at: string;
  updated_at: string;
  /** The client instance that runs it (null: written before runs/002, or by a client without leases). */
  owner_id: string | null;
  /** Until when the owner vouches for the run; a pending or running row past it is an orphan. Null: never swept. */
  lease_until: string | null;
  /** When a cancel was asked for from an instance that does not hold the run; the owner honours it. */
  cancel_requested_at: string | null;
  /** A paused run's pending interrupt as JSON (`PausedInterrupt`); null otherwise. Added by runs/004. */
  interrupt: string | null;
  /** Until when a paused run waits; past it, its interrupt's `on_timeout` resumes it. Null: no deadline. */
  resume_by: string | null;
  /** USD the run's model calls cost (subagents included), written when it ends; null before runs/005 or unpriced. */
  cost_usd: number | null;
  /** JSON list of the model attempts of calls that needed more than one (retries, fallbacks); null when none. */
  model_attempts: string | null;
  /** Which attempt of the run this is: 1, plus one per takeover after its process stopped. Added by runs/006. */
  attempt: number;
  /**
   * The run's input and context as given, unredacted (JSON `{ input, context }`): what a queued run starts from and
   * what a taken-over run continues with when its input never reached a checkpoint. Never shown (the record's
   * `kwargs` are the redacted copy); cleared when the run ends or pauses. Added by runs/007 (null before it).
   */
  start_input: string | null;
}
