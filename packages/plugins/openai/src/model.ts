import { AntlerError, ErrorCodes, type ModelConfig, type ModelProviderEnv } from "@antler/kernel";
import { fetchWithTraceId, withModelErrorContext } from "@antler/model-kit";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatOpenAI, type ChatOpenAIFields } from "@langchain/openai";
import { ReasoningServerChatModel } from "./reasoning-server.js";
import { reasoningServerSettings } from "./reasoning-settings.js";

// Local OpenAI-compatible servers (vLLM, Ollama) need no key, but the OpenAI client refuses to start without one.
const PLACEHOLDER_KEY = "not-needed";

type ClientOptions = NonNullable<ChatOpenAIFields["configuration"]>;

function failureHint(where: string): (error: unknown, status: number | undefined) => string | undefined {
  return (_error, status) => {
    if (status === 401 || status === 403) return `Check ${where}.api_key (or the OPENAI_API_KEY environment variable).`;
    if (status === 404) return `Check ${where}.model and ${where}.base_url: the endpoint does not know this model or path.`;
    if (status === 429) return `The provider is rate limiting; raise ${where}.max_retries or slow down.`;
    if (status !== undefined && status >= 500) return "The provider failed; retry later.";
    if (status === undefined) return `Is ${where}.base_url (or api.openai.com) reachable from here?`;
    return undefined;
  };
}

/**
 * Builds the chat model for a `provider: openai` entry: OpenAI itself, or any OpenAI-compatible endpoint via
 * `base_url`. Every request carries the trace id as `X-Trace-Id`; failures become MODEL_CALL_FAILED errors.
 */
export function createOpenAIModel(config: ModelConfig, env: ModelProviderEnv): BaseChatModel {
  const where = env.where;
  if (!config.model) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" needs the provider's model id`, {
      where: `${where}.model`,
      hint: "Set model: to the id the endpoint serves, e.g. model: gpt-4o-mini.",
    });
  }
  // With a base_url, OPENAI_API_KEY is not used: it belongs to api.openai.com and must not leak to another host.
  const apiKey = config.api_key ?? (config.base_url ? PLACEHOLDER_KEY : env.env.OPENAI_API_KEY);
  if (!apiKey) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" has no API key`, {
      where: `${where}.api_key`,
      hint: `Set ${where}.api_key (e.g. api_key: $OPENAI_API_KEY) or export OPENAI_API_KEY; for a local OpenAI-compatible server set ${where}.base_url.`,
    });
  }
  const server = reasoningServerSettings(config, where);
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
    ...(config.base_url ? { baseURL: config.base_url } : {}),
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
  // OpenAI's knob is `reasoning.effort` (sent for its reasoning models); a reasoning server reads `reasoning_effort`.
  const model = server
    ? new ReasoningServerChatModel(
        effort ? { ...fields, modelKwargs: { reasoning_effort: effort, ...fields.modelKwargs } } : fields,
        server.field,
        server.passback,
      )
    : new ChatOpenAI(effort && !fields.reasoning ? { ...fields, reasoning: { effort } } : fields);
  return withModelErrorContext(model, config.name, { where, hint: failureHint(where) });
}
