import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ModelConfig } from "../config/schema.js";
import type { Logger } from "../logging.js";
import type { PluginPaths } from "../paths.js";

/** What a model provider gets besides the model's config entry. */
export interface ModelProviderEnv {
  readonly paths: PluginPaths;
  readonly logger: Logger;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Config path of the model's entry, e.g. `models[2]`, for error messages. */
  readonly where: string;
  /** Builds another configured model by name (a cassette recording wraps the real model this way). */
  createModel(name: string): Promise<BaseChatModel>;
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
