import { TRACE_METADATA_KEY } from "@antler/kernel";
import type { BaseMessage } from "@langchain/core/messages";
import type { StateSnapshot } from "@langchain/langgraph";
import { type SerializedMessage, serializeMessage, type ValuesEvent } from "./events.js";

/** One checkpoint of a thread, as history and state reads answer it. */
export interface ThreadCheckpoint {
  checkpoint_id: string;
  /** The checkpoint it was written after; null for the thread's first. */
  parent_checkpoint_id: string | null;
  /** ISO-8601, when the checkpoint was written. */
  created_at: string | null;
  /** What LangGraph recorded: `source` (`input`, `loop`, `update`, `fork`), `step`, and the run that wrote it. */
  metadata: Record<string, unknown>;
  /** The thread's state at this checkpoint, messages serialized. */
  values: ValuesEvent["data"];
  /** The graph nodes that would run next from here; empty when the turn is over. */
  next: string[];
  /** The tasks due from here (a failed one carries its error). */
  tasks: Array<{ id: string; name: string; error: string | null }>;
}

export interface ThreadHistoryOptions {
  userId?: string;
  /** Newest first, at most this many (1–1000, default 10). */
  limit?: number;
  /** Only checkpoints older than this checkpoint id. */
  before?: string;
  /** Only checkpoints whose metadata has each of these key/values. */
  metadata?: Record<string, unknown>;
}

export interface UpdateThreadStateOptions {
  userId?: string;
  /**
   * State keys to write, through the graph's reducers: `messages` (message dicts or LangChain messages) are
   * appended, or replace the message with the same `id`; the other keys are replaced.
   */
  values: Record<string, unknown>;
  /** The node the update is written as (the next step follows that node's edges); default LangGraph's choice. */
  asNode?: string;
  /** Update from this checkpoint rather than the latest (a fork of the thread's past). */
  checkpointId?: string;
}

// Checkpoint metadata a reader may see; the rest (the checkpoint's own thread id, which names the user) stays in.
const PUBLIC_METADATA = ["source", "step", "parents", "run_id", TRACE_METADATA_KEY] as const;

export function toThreadCheckpoint(snapshot: StateSnapshot): ThreadCheckpoint {
  const state = (snapshot.values ?? {}) as Record<string, unknown>;
  const messages = (state.messages as BaseMessage[] | undefined) ?? [];
  const metadata: Record<string, unknown> = {};
  const raw = (snapshot.metadata ?? {}) as Record<string, unknown>;
  for (const key of PUBLIC_METADATA) if (raw[key] !== undefined) metadata[key] = raw[key];
  return {
    checkpoint_id: String(snapshot.config.configurable?.checkpoint_id ?? ""),
    parent_checkpoint_id: (snapshot.parentConfig?.configurable?.checkpoint_id as string | undefined) ?? null,
    created_at: snapshot.createdAt ?? null,
    metadata,
    values: {
      title: (state.title as string | undefined) ?? null,
      messages: messages.map((m): SerializedMessage => serializeMessage(m)),
      artifacts: (state.artifacts as string[] | undefined) ?? [],
      summary_text: (state.summary_text as string | null | undefined) ?? null,
      todos: (state.todos as unknown[] | undefined) ?? null,
      stop_reason: (state.stop_reason as string | null | undefined) ?? null,
    },
    next: [...snapshot.next],
    tasks: snapshot.tasks.map((task) => ({
      id: task.id,
      name: task.name,
      error: task.error === undefined || task.error === null ? null : String((task.error as { message?: unknown }).message ?? task.error),
    })),
  };
}
