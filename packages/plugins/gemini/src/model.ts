import { AntlerError, ErrorCodes, type ModelConfig, type ModelProviderEnv } from "@antler/kernel";
import { traceIdHeaders, withModelErrorContext } from "@antler/model-kit";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatGenerationChunk } from "@langchain/core/outputs";
import { ChatGoogleGenerativeAI, type GoogleGenerativeAIChatInput } from "@langchain/google-genai";

// A Gemini-compatible proxy at base_url may need no key, but the client refuses to start without one.
const PLACEHOLDER_KEY = "not-needed";
type Effort = NonNullable<ModelConfig["reasoning_effort"]>;
/** Thinking budgets (tokens) for models before Gemini 3, which take a budget rather than a level. */
const BUDGET: Record<Effort, number> = { minimal: 512, low: 1024, medium: 8192, high: 24576 };

/** Gemini 3 takes `thinkingLevel`; earlier thinking models take `thinkingBudget`. Thoughts are asked for either way. */
function thinkingConfig(model: string, effort: Effort): Record<string, unknown> {
  return model.startsWith("gemini-3")
    ? { includeThoughts: true, thinkingLevel: effort }
    : { includeThoughts: true, thinkingBudget: BUDGET[effort] };
}

/**
 * `ChatGoogleGenerativeAI` whose streamed chunks reach the callbacks whole. The base reports each chunk's text
 * alone, so a run's message stream (LangGraph's "messages" mode) never saw thought parts: they are not text.
 */
class ChatGemini extends ChatGoogleGenerativeAI {
  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    for await (const chunk of super._streamResponseChunks(messages, options)) {
      yield chunk;
      await runManager?.handleLLMNewToken(chunk.text ?? "", undefined, undefined, undefined, undefined, { chunk });
    }
  }
}

function failureHint(where: string): (error: unknown, status: number | undefined) => string | undefined {
  return (_error, status) => {
    if (status === 400)
      return `Gemini refused the request; check ${where}.model and ${where}.options (and that the model takes images if one was sent).`;
    if (status === 401 || status === 403) return `Check ${where}.api_key (or the GOOGLE_API_KEY / GEMINI_API_KEY environment variables).`;
    if (status === 404) return `Check ${where}.model: the Gemini API does not know this model id (or options.apiVersion).`;
    if (status === 429)
      return `Gemini's quota or rate limit is exhausted; raise ${where}.max_retries, slow down, or check the project's quota.`;
    if (status !== undefined && status >= 500) return "Gemini failed or is overloaded; retry later.";
    if (status === undefined) return `Is ${where}.base_url (or generativelanguage.googleapis.com) reachable from here?`;
    return undefined;
  };
}

/**
 * Builds the chat model for a `provider: gemini` entry. Every request carries the trace id as `X-Trace-Id`;
 * failures become MODEL_CALL_FAILED errors naming the model and the trace id.
 */
export function createGeminiModel(config: ModelConfig, env: ModelProviderEnv): BaseChatModel {
  const where = env.where;
  if (!config.model) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" needs the Gemini model id`, {
      where: `${where}.model`,
      hint: "Set model:, e.g. model: gemini-2.5-flash.",
    });
  }
  // With a base_url, the Google keys are not used: they belong to Google's API and must not leak to another host.
  const apiKey = config.api_key ?? (config.base_url ? PLACEHOLDER_KEY : (env.env.GOOGLE_API_KEY ?? env.env.GEMINI_API_KEY));
  if (!apiKey) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" has no API key`, {
      where: `${where}.api_key`,
      hint: `Set ${where}.api_key (e.g. api_key: $GEMINI_API_KEY) or export GOOGLE_API_KEY or GEMINI_API_KEY.`,
    });
  }
  const { customHeaders, thinkingConfig: extraThinking, ...extraFields } = (config.options ?? {}) as Partial<GoogleGenerativeAIChatInput>;
  const effort = config.supports_thinking ? config.reasoning_effort : undefined;
  const thinking = effort ? { ...thinkingConfig(config.model, effort), ...extraThinking } : extraThinking;
  const model = new ChatGemini({
    ...extraFields,
    model: config.model,
    apiKey,
    // Typed as a record here; the Google client takes Headers too and reads them on every request.
    customHeaders: traceIdHeaders(customHeaders) as unknown as Record<string, string>,
    ...(config.base_url ? { baseUrl: config.base_url.replace(/\/+$/, "") } : {}),
    ...(thinking ? { thinkingConfig: thinking as GoogleGenerativeAIChatInput["thinkingConfig"] } : {}),
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
    ...(config.max_tokens === undefined ? {} : { maxOutputTokens: config.max_tokens }),
    ...(config.max_retries === undefined ? {} : { maxRetries: config.max_retries }),
  });
  return withModelErrorContext(model, config.name, { where, hint: failureHint(where) });
}
