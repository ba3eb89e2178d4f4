import { AntlerError, ErrorCodes, type ModelConfig, type ModelProviderEnv } from "@antler/kernel";
import { fetchWithTraceId, withModelErrorContext } from "@antler/model-kit";
import { ChatAnthropic, type ChatAnthropicInput } from "@langchain/anthropic";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";

/** Anthropic requires max_tokens on every request; this is used when the entry sets none. */
export const DEFAULT_MAX_TOKENS = 4096;

// An Anthropic-compatible proxy at base_url may need no key, but ChatAnthropic refuses to start without one.
const PLACEHOLDER_KEY = "not-needed";

type ClientOptions = NonNullable<ChatAnthropicInput["clientOptions"]>;

function failureHint(where: string): (error: unknown, status: number | undefined) => string | undefined {
  return (_error, status) => {
    if (status === 401 || status === 403) return `Check ${where}.api_key (or the ANTHROPIC_API_KEY environment variable).`;
    if (status === 404) return `Check ${where}.model: Anthropic does not know this model id.`;
    if (status === 429 || status === 529) return `Anthropic is rate limiting or overloaded; raise ${where}.max_retries or retry later.`;
    if (status !== undefined && status >= 500) return "Anthropic failed; retry later.";
    if (status === undefined) return `Is ${where}.base_url (or api.anthropic.com) reachable from here?`;
    return undefined;
  };
}

/**
 * Builds the chat model for a `provider: anthropic` entry. Every request carries the trace id as `X-Trace-Id`;
 * failures become MODEL_CALL_FAILED errors naming the model and the trace id.
 */
export function createAnthropicModel(config: ModelConfig, env: ModelProviderEnv): BaseChatModel {
  const where = env.where;
  if (!config.model) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" needs Anthropic's model id`, {
      where: `${where}.model`,
      hint: "Set model:, e.g. model: claude-sonnet-4-5.",
    });
  }
  // With a base_url, ANTHROPIC_API_KEY is not used: it belongs to api.anthropic.com and must not leak to another host.
  const apiKey = config.api_key ?? (config.base_url ? PLACEHOLDER_KEY : env.env.ANTHROPIC_API_KEY);
  if (!apiKey) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" has no API key`, {
      where: `${where}.api_key`,
      hint: `Set ${where}.api_key (e.g. api_key: $ANTHROPIC_API_KEY) or export ANTHROPIC_API_KEY.`,
    });
  }
  const { clientOptions: extraClientOptions, thinking, ...extraFields } = (config.options ?? {}) as Partial<ChatAnthropicInput>;
  if (thinking !== undefined && !config.supports_thinking) {
    throw new AntlerError(
      ErrorCodes.CONFIG_INVALID,
      `model "${config.name}" sets options.thinking but does not declare supports_thinking`,
      {
        where: `${where}.options.thinking`,
        hint: `Add supports_thinking: true to ${where} if the model supports extended thinking, or remove options.thinking.`,
      },
    );
  }
  const clientOptions: ClientOptions = {
    ...extraClientOptions,
    fetch: fetchWithTraceId(extraClientOptions?.fetch ?? globalThis.fetch),
    ...(config.timeout_seconds === undefined ? {} : { timeout: config.timeout_seconds * 1000 }),
  };
  const model = new ChatAnthropic({
    ...extraFields,
    model: config.model,
    apiKey,
    clientOptions,
    maxTokens: config.max_tokens ?? DEFAULT_MAX_TOKENS,
    ...(config.base_url ? { anthropicApiUrl: config.base_url } : {}),
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
    ...(config.max_retries === undefined ? {} : { maxRetries: config.max_retries }),
    ...(thinking === undefined ? {} : { thinking }),
  });
  return withModelErrorContext(model, config.name, { where, hint: failureHint(where) });
}
