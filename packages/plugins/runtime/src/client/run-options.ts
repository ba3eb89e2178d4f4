import { AntlerError, ErrorCodes, type Logger, type ModelConfig } from "@antler/kernel";
import type { CustomAgent } from "../agents.js";

// How a run's thinking switch and reasoning effort are decided from the request, the custom agent and the model.

/** What of a run's request (`RunCallOptions`) decides them. */
interface RunRequestFlags {
  thinking?: boolean | undefined;
  reasoningEffort?: ReasoningEffort | undefined;
  context?: Record<string, unknown> | undefined;
}

/**
 * A run's thinking switch: the request (`thinking`, else a boolean `context.thinking_enabled`), else the custom
 * agent's default, else on (DeerFlow's default); then off on a model without `supports_thinking`, with a warning
 * when the request or the agent asked for it.
 */
export function runThinking(options: RunRequestFlags, custom: CustomAgent | undefined, model: ModelConfig, logger: Logger): boolean {
  const fromContext = options.context?.thinking_enabled;
  if (fromContext !== undefined && typeof fromContext !== "boolean") {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `context.thinking_enabled must be true or false, not ${JSON.stringify(fromContext)}`, {
      where: "context.thinking_enabled",
      hint: "Send thinking_enabled: true or false (or leave it out for the agent's default).",
    });
  }
  const asked = options.thinking ?? fromContext ?? custom?.thinking;
  if (asked && !model.supports_thinking) {
    logger.warn(
      { model: model.name, agent_name: custom?.name },
      `thinking is off for this run: model "${model.name}" does not declare supports_thinking`,
    );
  }
  return (asked ?? true) && model.supports_thinking;
}

export type ReasoningEffort = NonNullable<ModelConfig["reasoning_effort"]>;
const EFFORTS: readonly ReasoningEffort[] = ["minimal", "low", "medium", "high"];

/** A run context's `reasoning_effort`, as `agentFor` reads it (validated when the run began). */
export function contextEffort(context: Record<string, unknown>): ReasoningEffort | undefined {
  const effort = context.reasoning_effort;
  return EFFORTS.includes(effort as ReasoningEffort) ? (effort as ReasoningEffort) : undefined;
}

/**
 * A run's reasoning effort: the request's (`reasoningEffort`, else `context.reasoning_effort`), checked; undefined
 * (the entry's own applies) when none was asked, when thinking is off, or on a model without `supports_thinking`.
 */
export function runReasoningEffort(
  options: RunRequestFlags,
  model: ModelConfig,
  thinking: boolean,
  logger: Logger,
): ReasoningEffort | undefined {
  const fromContext = options.context?.reasoning_effort;
  const asked = options.reasoningEffort ?? fromContext;
  if (asked === undefined) return undefined;
  if (!EFFORTS.includes(asked as ReasoningEffort)) {
    const where = options.reasoningEffort === undefined ? "context.reasoning_effort" : "reasoning_effort";
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `${where} must be one of ${EFFORTS.join(", ")}, not ${JSON.stringify(asked)}`, {
      where,
      hint: "Send minimal, low, medium or high (or leave it out for the model's own reasoning_effort).",
    });
  }
  if (!model.supports_thinking) {
    logger.warn(
      { model: model.name },
      `reasoning_effort is ignored for this run: model "${model.name}" does not declare supports_thinking`,
    );
    return undefined;
  }
  return thinking ? (asked as ReasoningEffort) : undefined;
}
