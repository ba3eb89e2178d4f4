// Antler's run records as LangGraph's Run objects.
import type { RunRecord } from "@antler/plugin-runtime";
import { LEAD_ASSISTANT_ID } from "./assistants.js";
import { isRecord } from "./http.js";

/** LangGraph's run statuses. */
export type LangGraphRunStatus = "pending" | "running" | "error" | "success" | "timeout" | "interrupted";

/** The Run object of the LangGraph API (`Run` in `@langchain/langgraph-sdk`). */
export interface LangGraphRun {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: LangGraphRunStatus;
  metadata: Record<string, unknown>;
  multitask_strategy: "reject" | "enqueue" | "interrupt" | "rollback" | null;
  kwargs: Record<string, unknown>;
}

/**
 * The run metadata key under which a LangGraph run keeps what Antler's run record has no field for: the assistant
 * id asked for and the stream modes (a join streams what the run was started with). Not shown in `Run.metadata`.
 */
export const RUN_METADATA_KEY = "langgraph";

/**
 * Antler's run record → LangGraph's Run. `cancelled` is LangGraph's `interrupted` (what a cancel with
 * `action: interrupt` leaves); `endedOnInterrupt` marks a successful run that stopped on a question for the user.
 */
export function toLangGraphRun(record: RunRecord, options: { endedOnInterrupt?: boolean } = {}): LangGraphRun {
  const kwargs = record.kwargs;
  const context = isRecord(kwargs.context) ? kwargs.context : {};
  const { [RUN_METADATA_KEY]: stamp, ...metadata } = isRecord(kwargs.metadata) ? kwargs.metadata : {};
  const langgraph = isRecord(stamp) ? stamp : {};
  const strategy = kwargs.multitask_strategy;
  const agent =
    typeof langgraph.assistant_id === "string"
      ? langgraph.assistant_id
      : typeof context.agent_name === "string" && context.is_bootstrap !== true
        ? context.agent_name
        : LEAD_ASSISTANT_ID;
  let status: LangGraphRunStatus;
  switch (record.status) {
    case "cancelled":
    case "paused":
      // A paused run waits on an approval: LangGraph's interrupted run.
      status = "interrupted";
      break;
    case "success":
      status = options.endedOnInterrupt ? "interrupted" : "success";
      break;
    default:
      status = record.status;
  }
  return {
    run_id: record.run_id,
    thread_id: record.thread_id,
    assistant_id: agent,
    created_at: record.created_at,
    updated_at: record.updated_at,
    status,
    metadata,
    multitask_strategy: strategy === "reject" || strategy === "enqueue" || strategy === "interrupt" ? strategy : null,
    kwargs: {
      ...kwargs,
      metadata,
      stream_mode: Array.isArray(langgraph.stream_mode) ? langgraph.stream_mode : ["values"],
      stream_subgraphs: langgraph.stream_subgraphs === true,
      model: record.model,
      trace_id: record.trace_id,
      ...(record.error ? { error: record.error } : {}),
    },
  };
}
