import { AntlerError, ErrorCodes, type ModelConfig } from "@antler/kernel";
import type { ReasoningField } from "./reasoning-server.js";

type Effort = NonNullable<ModelConfig["reasoning_effort"]>;

/**
 * A vendor whose API is OpenAI's Chat Completions at a URL of its own: served by the `openai` provider's client
 * with the vendor's URL, key variable, reasoning knob and reasoning field.
 */
export interface OpenAICompatiblePreset {
  /** The `provider:` id. */
  readonly id: string;
  readonly vendor: string;
  readonly baseUrl: string;
  /** The environment variable that holds the vendor's key (never sent to another `base_url`). */
  readonly keyEnv: string;
  /** Where the vendor puts a reasoning model's reasoning in messages and deltas, if it sends it as a field. */
  readonly reasoningField?: ReasoningField;
  /** The request body fields that ask `model` for `effort`; a string says why the model takes none. */
  effortFields(model: string, effort: Effort): Record<string, unknown> | string;
}

const LOW_FLOOR = (effort: Effort) => (effort === "minimal" ? "low" : effort);

export const PRESETS: readonly OpenAICompatiblePreset[] = [
  {
    id: "mistral",
    vendor: "Mistral",
    baseUrl: "https://api.mistral.ai/v1",
    keyEnv: "MISTRAL_API_KEY",
    // Adjustable reasoning (mistral-small-latest, mistral-medium-3.5): `high` thinks in full, `none` minimally.
    effortFields: (model, effort) =>
      model.startsWith("magistral")
        ? "Magistral models always reason and take no reasoning_effort"
        : { reasoning_effort: effort === "minimal" || effort === "low" ? "none" : "high" },
  },
  {
    id: "groq",
    vendor: "Groq",
    baseUrl: "https://api.groq.com/openai/v1",
    keyEnv: "GROQ_API_KEY",
    reasoningField: "reasoning",
    // gpt-oss takes low/medium/high; Qwen 3 only switches thinking (`default`) and needs the parsed format to
    // send its reasoning in `reasoning` rather than inside <think> tags in the answer.
    effortFields: (model, effort) =>
      /qwen/i.test(model) ? { reasoning_effort: "default", reasoning_format: "parsed" } : { reasoning_effort: LOW_FLOOR(effort) },
  },
  {
    id: "xai",
    vendor: "xAI",
    baseUrl: "https://api.x.ai/v1",
    keyEnv: "XAI_API_KEY",
    reasoningField: "reasoning_content",
    // Only grok-3-mini takes an effort (low or high); grok-4 and later reason on their own and refuse the field.
    effortFields: (model, effort) =>
      model.startsWith("grok-3-mini")
        ? { reasoning_effort: effort === "minimal" || effort === "low" ? "low" : "high" }
        : "only grok-3-mini models take reasoning_effort (grok-4 and later reason on their own)",
  },
];

/** The effort's request fields for an entry of `preset`, or a CONFIG_INVALID naming `reasoning_effort`. */
export function presetEffortFields(preset: OpenAICompatiblePreset, config: ModelConfig, where: string): Record<string, unknown> {
  const effort = config.supports_thinking ? config.reasoning_effort : undefined;
  if (!effort || !config.model) return {};
  const fields = preset.effortFields(config.model, effort);
  if (typeof fields === "string") {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" sets reasoning_effort: ${fields}`, {
      where: `${where}.reasoning_effort`,
      hint: `Remove ${where}.reasoning_effort for ${preset.vendor} model "${config.model}".`,
    });
  }
  return fields;
}
