import { AntlerError, ErrorCodes, type ModelConfig, type ModelProviderEnv } from "@antler/kernel";
import { fetchWithTraceId, withModelErrorContext } from "@antler/model-kit";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatOpenAI, type ChatOpenAIFields } from "@langchain/openai";
import { type OpenAICompatiblePreset, presetEffortFields } from "./presets.js";
import { ReasoningServerChatModel } from "./reasoning-server.js";
import { reasoningServerSettings } from "./reasoning-settings.js";

// Local OpenAI-compatible servers (vLLM, Ollama) need no key, but the OpenAI client refuses to start without one.
const PLACEHOLDER_KEY = "not-needed";

type ClientOptions = NonNullable<ChatOpenAIFields["configuration"]>;

function failureHint(where: string, keyEnv: string): (error: unknown, status: number | undefined) => string | undefined {
  return (_error, status) => {
    if (status === 401 || status === 403) return `Check ${where}.api_key (or the ${keyEnv} environment variable).`;
    if (status === 404) return `Check ${where}.model and ${where}.base_url: the endpoint does not know this model or path.`;
    if (status === 429) return `The provider is rate limiting; raise ${where}.max_retries or slow down.`;
    if (status !== undefined && status >= 500) return "The provider failed; retry later.";
    if (status === undefined) return `Is ${where}.base_url (or the provider's API) reachable from here?`;
    return undefined;
  };
}

/**
 * Builds the chat model for a `provider: openai` entry: OpenAI itself, or any OpenAI-compatible endpoint via
 * `base_url`; with a `preset`, a vendor's own Chat Completions API (Mistral, Groq, xAI). Every request carries the
 * trace id as `X-Trace-Id`; failures become MODEL_CALL_FAILED errors.
 */
export function createOpenAIModel(config: ModelConfig, env: ModelProviderEnv, preset?: OpenAICompatiblePreset): BaseChatModel {
  const where = env.where;
  if (!config.model) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" needs the provider's model id`, {
      where: `${where}.model`,
      hint: "Set model: to the id the endpoint serves, e.g. model: gpt-4o-mini.",
    });
  }
  const keyEnv = preset?.keyEnv ?? "OPENAI_API_KEY";
  // With a base_url, the vendor's key variable is not used: the key belongs to its API and must not leak to another host.
  const apiKey = config.api_key ?? (config.base_url ? PLACEHOLDER_KEY : env.env[keyEnv]);
  if (!apiKey) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" has no API key`, {
      where: `${where}.api_key`,
      hint: `Set ${where}.api_key (e.g. api_key: $${keyEnv}) or export ${keyEnv}${preset ? "" : `; for a local OpenAI-compatible server set ${where}.base_url`}.`,
    });
  }
  const presetEffort = preset ? presetEffortFields(preset, config, where) : {};
  const server =
    reasoningServerSettings(config, where) ??
    (preset?.reasoningField && config.supports_thinking ? { field: preset.reasoningField, passback: "none" as const } : undefined);
  const {
    configuration: extraConfiguration,
    reasoning_field: _field,
    reasoning_passback: _passback,
    ...extraFields
  } = (config.options ?? {}) as Partial<ChatOpenAIFields> & { reasoning_field?: unknown; reasoning_passback?: unknown };
  // Reasoning settings only go to models declared to reason, like `thinking` for Anthropic.
  const reasoningKey = (["reasoning", "reasoningEffort", "reasoning_effort"] as const).find(
    (key) => (extraFields as Record<string, unknown>)[key] !== undefined,
  );
  if (reasoningKey && !config.supports_thinking) {
    throw new AntlerError(
      ErrorCodes.CONFIG_INVALID,
      `model "${config.name}" sets options.${reasoningKey} but does not declare supports_thinking`,
      {
        where: `${where}.options.${reasoningKey}`,
        hint: `Add supports_thinking: true to ${where} if the model is a reasoning model, or remove options.${reasoningKey}.`,
      },
    );
  }
  const clientOptions: ClientOptions = {
    ...extraConfiguration,
    ...(config.base_url || preset ? { baseURL: config.base_url ?? preset?.baseUrl } : {}),
    fetch: fetchWithTraceId(extraConfiguration?.fetch ?? globalThis.fetch),
  };
  const effort = config.supports_thinking ? config.reasoning_effort : undefined;
  const fields: ChatOpenAIFields = {
    ...extraFields,
    model: config.model,
    apiKey,
    configuration: clientOptions,
    streamUsage: true,
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
    ...(config.max_tokens === undefined ? {} : { maxTokens: config.max_tokens }),
    ...(config.timeout_seconds === undefined ? {} : { timeout: config.timeout_seconds * 1000 }),
    ...(config.max_retries === undefined ? {} : { maxRetries: config.max_retries }),
  };
  // OpenAI's knob is `reasoning.effort` (sent for its reasoning models); a reasoning server reads `reasoning_effort`;
  // a preset's vendor takes the fields its preset maps the effort to.
  const effortKwargs = preset ? presetEffort : effort ? { reasoning_effort: effort } : {};
  const withEffort = { ...fields, modelKwargs: { ...effortKwargs, ...fields.modelKwargs } };
  let model: BaseChatModel;
  if (server) model = new ReasoningServerChatModel(withEffort, server.field, server.passback);
  else if (preset) model = new ChatOpenAI(withEffort);
  else model = new ChatOpenAI(effort && !fields.reasoning ? { ...fields, reasoning: { effort } } : fields);
  return withModelErrorContext(model, config.name, { where, hint: failureHint(where, keyEnv) });
}
