import { AntlerError, ErrorCodes, type ModelConfig } from "@antler/kernel";
import { z } from "zod";

type Effort = NonNullable<ModelConfig["reasoning_effort"]>;

const bedrockOptionsSchema = z.looseObject({
  region: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, "must be an AWS region such as us-east-1")
    .optional(),
  profile: z.string().min(1).optional(),
  additionalModelRequestFields: z.record(z.string(), z.unknown()).optional(),
});

/** Claude's thinking budgets (tokens) per effort; Bedrock takes no less than 1,024. */
const CLAUDE_BUDGET: Record<Effort, number> = { minimal: 1024, low: 2048, medium: 8192, high: 16384 };
const LOW_FLOOR = (effort: Effort) => (effort === "minimal" ? "low" : effort);

/**
 * The `additionalModelRequestFields` that ask a Bedrock model family for `effort`: Claude's `thinking` budget, Nova's
 * `reasoningConfig`, the OpenAI open-weight models' `reasoning_effort`. Undefined for a family without a known knob.
 */
export function reasoningFields(modelId: string, effort: Effort): Record<string, unknown> | undefined {
  if (/(^|\.)anthropic\./.test(modelId)) return { thinking: { type: "enabled", budget_tokens: CLAUDE_BUDGET[effort] } };
  if (/(^|\.)amazon\.nova/.test(modelId)) return { reasoningConfig: { type: "enabled", maxReasoningEffort: LOW_FLOOR(effort) } };
  if (/(^|\.)openai\./.test(modelId)) return { reasoning_effort: LOW_FLOOR(effort) };
  return undefined;
}

export interface BedrockSettings {
  readonly modelId: string;
  readonly region: string | undefined;
  readonly profile: string | undefined;
  readonly additionalModelRequestFields: Record<string, unknown> | undefined;
  /** The options left for `ChatBedrockConverse`'s own fields. */
  readonly rest: Record<string, unknown>;
}

function invalid(config: ModelConfig, where: string, message: string, hint: string): AntlerError {
  return new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" ${message}`, { where, hint });
}

/** Reads and checks a `bedrock` entry without loading the AWS SDK (so `antler config check` can run it). */
export function bedrockSettings(config: ModelConfig, where: string): BedrockSettings {
  if (!config.model) {
    throw invalid(
      config,
      `${where}.model`,
      "needs the Bedrock model id",
      "Set model: to a model or inference profile id, e.g. anthropic.claude-3-5-haiku-20241022-v1:0 or us.amazon.nova-pro-v1:0.",
    );
  }
  const parsed = bedrockOptionsSchema.safeParse(config.options ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue?.path.join(".") ?? "";
    throw invalid(
      config,
      `${where}.options.${key}`,
      `options.${key} ${issue?.message ?? "is invalid"}`,
      "See the provider's README for its options.",
    );
  }
  const { region, profile, additionalModelRequestFields, ...rest } = parsed.data;
  const effort = config.supports_thinking ? config.reasoning_effort : undefined;
  let fields = additionalModelRequestFields;
  if (effort) {
    const knob = reasoningFields(config.model, effort);
    if (!knob) {
      throw invalid(
        config,
        `${where}.reasoning_effort`,
        `sets reasoning_effort, and Antler knows no reasoning knob for Bedrock model "${config.model}"`,
        `Remove reasoning_effort and put the model's own field in ${where}.options.additionalModelRequestFields (known: anthropic.*, amazon.nova*, openai.*).`,
      );
    }
    fields = { ...knob, ...fields };
  }
  return { modelId: config.model, region, profile, additionalModelRequestFields: fields, rest };
}
