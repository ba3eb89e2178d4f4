import { AntlerError, ErrorCodes, type ModelConfig, type ModelProviderEnv } from "@antler/kernel";
import { fetchWithTraceId, reasoningToSendBack, withModelErrorContext, withReasoningSentBack } from "@antler/model-kit";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatGenerationChunk, ChatResult } from "@langchain/core/outputs";
import { ChatDeepSeek, type ChatDeepSeekInput } from "@langchain/deepseek";

// A DeepSeek-compatible proxy at base_url may need no key, but the OpenAI client refuses to start without one.
const PLACEHOLDER_KEY = "not-needed";
/** DeepSeek's effort levels are high and max (low and medium count as high); `minimal` is sent as the lowest. */
const EFFORT = { minimal: "low", low: "low", medium: "medium", high: "high" } as const;

/** Where the reasoning plan of one call travels from the LangChain messages to the request body. */
const PLAN = Symbol("antler.deepseek.reasoningPlan");
type Planned = { [PLAN]?: Array<string | undefined> };
type Options = ChatDeepSeek["ParsedCallOptions"];
/** The body of either overload (streaming or not); only `messages` is read. */
type CompletionRequest = { messages: Array<{ role?: unknown }> };
type CompletionRequestOptions = Parameters<ChatDeepSeek["completionWithRetry"]>[1];

/**
 * `ChatDeepSeek` that sends reasoning back as DeepSeek's thinking mode requires: `reasoning_content` on every
 * assistant message of a user turn with tool calls, none elsewhere. `ChatDeepSeek` builds the request messages
 * itself and drops the field, so the plan is computed from the LangChain messages here and applied to the
 * request on its way to the client.
 */
class ChatDeepSeekWithReasoning extends ChatDeepSeek {
  private planned(messages: BaseMessage[], options: Options): Options {
    const plan = reasoningToSendBack(messages, "tool_turns");
    // Streaming calls hand the client the call options, plain calls their `options` field: plan both.
    return { ...options, [PLAN]: plan, options: { ...options.options, [PLAN]: plan } } as Options;
  }

  override _generate(messages: BaseMessage[], options: Options, runManager?: CallbackManagerForLLMRun): Promise<ChatResult> {
    return super._generate(messages, this.planned(messages, options), runManager);
  }

  override _streamResponseChunks(
    messages: BaseMessage[],
    options: Options,
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const own = (options as Planned)[PLAN] ? options : this.planned(messages, options);
    return super._streamResponseChunks(messages, own, runManager);
  }

  override _streamChatModelEvents(messages: BaseMessage[], options: Options, runManager?: CallbackManagerForLLMRun) {
    return super._streamChatModelEvents(messages, this.planned(messages, options), runManager);
  }

  // biome-ignore lint/suspicious/noExplicitAny: the base method is overloaded (streaming or not); this serves both and returns what it returns.
  override completionWithRetry(request: any, requestOptions?: CompletionRequestOptions): Promise<any> {
    const { [PLAN]: plan, ...rest } = (requestOptions ?? {}) as CompletionRequestOptions & Planned;
    const body = request as CompletionRequest;
    const messages = plan ? withReasoningSentBack(body.messages, plan, "reasoning_content") : body.messages;
    return super.completionWithRetry({ ...request, messages }, rest as CompletionRequestOptions);
  }
}

function failureHint(where: string): (error: unknown, status: number | undefined) => string | undefined {
  return (_error, status) => {
    if (status === 401 || status === 403) return `Check ${where}.api_key (or the DEEPSEEK_API_KEY environment variable).`;
    if (status === 402) return "The DeepSeek account has no balance left: top it up, or use another model.";
    if (status === 400 || status === 422)
      return `DeepSeek refused the request's format or parameters; check ${where}.options and ${where}.model.`;
    if (status === 429) return `DeepSeek is rate limiting; raise ${where}.max_retries or slow down.`;
    if (status !== undefined && status >= 500) return "DeepSeek failed or is overloaded; retry later.";
    if (status === undefined) return `Is ${where}.base_url (or api.deepseek.com) reachable from here?`;
    return undefined;
  };
}

/**
 * Builds the chat model for a `provider: deepseek` entry. Every request carries the trace id as `X-Trace-Id`;
 * failures become MODEL_CALL_FAILED errors naming the model and the trace id.
 */
export function createDeepSeekModel(config: ModelConfig, env: ModelProviderEnv): BaseChatModel {
  const where = env.where;
  if (!config.model) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" needs DeepSeek's model id`, {
      where: `${where}.model`,
      hint: "Set model:, e.g. model: deepseek-chat (or deepseek-reasoner).",
    });
  }
  // With a base_url, DEEPSEEK_API_KEY is not used: it belongs to api.deepseek.com and must not leak to another host.
  const apiKey = config.api_key ?? (config.base_url ? PLACEHOLDER_KEY : env.env.DEEPSEEK_API_KEY);
  if (!apiKey) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" has no API key`, {
      where: `${where}.api_key`,
      hint: `Set ${where}.api_key (e.g. api_key: $DEEPSEEK_API_KEY) or export DEEPSEEK_API_KEY.`,
    });
  }
  const { configuration: extraConfiguration, modelKwargs, ...extraFields } = (config.options ?? {}) as Partial<ChatDeepSeekInput>;
  const effort = config.supports_thinking ? config.reasoning_effort : undefined;
  const model = new ChatDeepSeekWithReasoning({
    ...extraFields,
    model: config.model,
    apiKey,
    configuration: {
      ...extraConfiguration,
      ...(config.base_url ? { baseURL: config.base_url } : {}),
      fetch: fetchWithTraceId(extraConfiguration?.fetch ?? globalThis.fetch),
    },
    streamUsage: true,
    modelKwargs: { ...(effort ? { thinking: { type: "enabled" }, reasoning_effort: EFFORT[effort] } : {}), ...modelKwargs },
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
    ...(config.max_tokens === undefined ? {} : { maxTokens: config.max_tokens }),
    ...(config.timeout_seconds === undefined ? {} : { timeout: config.timeout_seconds * 1000 }),
    ...(config.max_retries === undefined ? {} : { maxRetries: config.max_retries }),
  });
  return withModelErrorContext(model, config.name, { where, hint: failureHint(where) });
}
