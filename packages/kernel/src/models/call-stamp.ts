/** What a model call plan stamps on a reply as `response_metadata.antler_model_call` (see `MODEL_CALL_PLANNER`). */
export interface ModelCallStamp {
  /** The configured model that answered (a fallback, when the asked one failed). */
  readonly model: string;
  /** USD of this call, or null when the answering model has no `pricing`. */
  readonly cost_usd: number | null;
  /** How many attempts the call took (1 when the first answered). */
  readonly attempts: number;
  /** Each attempt, when there was more than one (the `model_attempt` events' payloads). */
  readonly attempt_log?: ReadonlyArray<Record<string, unknown>>;
}

export const MODEL_CALL_STAMP_KEY = "antler_model_call";

/** The stamp on an AI message or chunk from a planned model, or undefined. */
export function modelCallStamp(message: { response_metadata?: Record<string, unknown> } | null | undefined): ModelCallStamp | undefined {
  const stamp = message?.response_metadata?.[MODEL_CALL_STAMP_KEY] as ModelCallStamp | undefined;
  return stamp && typeof stamp.model === "string" ? stamp : undefined;
}
