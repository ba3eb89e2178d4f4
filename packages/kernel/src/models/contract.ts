import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ModelConfig } from "../config/schema.js";
import { createToken, type Token } from "../di.js";
import type { Logger } from "../logging.js";
import type { PluginPaths } from "../paths.js";

/** What a model provider gets besides the model's config entry. */
export interface ModelProviderEnv {
  readonly paths: PluginPaths;
  readonly logger: Logger;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Config path of the model's entry, e.g. `models[2]`, for error messages. */
  readonly where: string;
  /** Builds another configured model by name (a cassette recording wraps the real model this way); default: the same options. */
  createModel(name: string, options?: CreateModelOptions): Promise<BaseChatModel>;
}

export interface CreateModelOptions {
  /**
   * Thinking on applies the entry's `when_thinking_enabled` block, off its `when_thinking_disabled` block; omitted,
   * the entry is used as written. Asked of a model without `supports_thinking`, thinking is off (and logged).
   * `reasoningEffort` (a run's own) replaces the entry's `reasoning_effort` when thinking is on.
   */
  readonly thinking?: boolean | undefined;
  readonly reasoningEffort?: ModelConfig["reasoning_effort"];
}

/** The entry the provider gets for `thinking`: the matching `when_thinking_*` block applied over it. */
export function thinkingModelConfig(config: ModelConfig, thinking: boolean, effort?: ModelConfig["reasoning_effort"]): ModelConfig {
  const { when_thinking_enabled: on, when_thinking_disabled: off, ...base } = config;
  const enabled = thinking && config.supports_thinking;
  const block = (enabled ? on : off) ?? {};
  const options = Object.entries({ ...base.options, ...block.options }).filter(([, value]) => value !== null);
  // A run with thinking off asks for no reasoning effort, unless its own block names one.
  const reasoning_effort = enabled ? (effort ?? block.reasoning_effort ?? base.reasoning_effort) : block.reasoning_effort;
  return { ...base, ...block, reasoning_effort, options: options.length > 0 ? Object.fromEntries(options) : undefined };
}

/**
 * Turns a `models:` entry into a LangChain chat model. Plugins register providers with
 * `ctx.models.addProvider(...)`; the entry's `provider:` picks one by `id`.
 */
export interface ModelProvider {
  /** `provider:` value in config.yaml, e.g. "openai", "anthropic", "cassette". */
  readonly id: string;
  readonly description?: string;
  create(config: ModelConfig, env: ModelProviderEnv): BaseChatModel | Promise<BaseChatModel>;
  /**
   * Checks an entry against what the provider knows (a setting it has no knob for, a capability it lacks) when
   * the kernel boots, so `antler config check` reports it. Throws `AntlerError(CONFIG_INVALID)` naming
   * `where` (e.g. `models[2].reasoning_effort`) with a hint. Must stay light: no vendor SDK is loaded for it.
   */
  check?(config: ModelConfig, where: string): void;
}

/** What the models list (client and gateway) shows: never keys or URLs with credentials. */
export interface ModelInfo {
  readonly name: string;
  readonly provider: string;
  readonly model: string | undefined;
  readonly displayName: string | undefined;
  readonly description: string | undefined;
  readonly supportsVision: boolean;
  readonly supportsThinking: boolean;
}

export function modelInfo(config: ModelConfig): ModelInfo {
  return Object.freeze({
    name: config.name,
    provider: config.provider,
    model: config.model,
    displayName: config.display_name,
    description: config.description,
    supportsVision: config.supports_vision,
    supportsThinking: config.supports_thinking,
  });
}

/**
 * Wraps a provider's model for an entry with `fallbacks`, `retry`, limits or `pricing` (the runtime provides one,
 * built on `@antler/model-kit`). The kernel calls it only for such entries; `fallbacks` are built already.
 */
export type ModelCallPlanner = (
  model: BaseChatModel,
  config: ModelConfig,
  fallbacks: ReadonlyArray<{ name: string; model: BaseChatModel }>,
  env: { readonly where: string; readonly logger: Logger },
) => Promise<BaseChatModel>;

export const MODEL_CALL_PLANNER: Token<ModelCallPlanner> = createToken<ModelCallPlanner>("kernel.model-call-planner");

/** Whether an entry asks for anything a call planner does. */
export function needsCallPlan(c: ModelConfig): boolean {
  return !!(c.fallbacks?.length || c.retry || c.max_concurrency || c.requests_per_minute || c.pricing);
}
