import { AntlerError, ErrorCodes, type ModelConfig, type ModelProviderEnv } from "@antler/kernel";
import { fetchWithTraceId, withModelErrorContext } from "@antler/model-kit";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatOllama, type ChatOllamaInput } from "@langchain/ollama";

/** Ollama's `think` levels; `minimal` has none of its own and is sent as the lowest. */
const THINK_LEVEL = { minimal: "low", low: "low", medium: "medium", high: "high" } as const;

function failureHint(config: ModelConfig, where: string): (error: unknown, status: number | undefined) => string | undefined {
  return (_error, status) => {
    if (status === 404) return `Ollama does not have ${config.model}: run \`ollama pull ${config.model}\`, or check ${where}.model.`;
    if (status === 401 || status === 403) return `Check ${where}.api_key for this Ollama server.`;
    if (status !== undefined && status >= 500) return "Ollama failed (often: out of memory loading the model); check its log and retry.";
    if (status === undefined)
      return `Is Ollama running at ${where}.base_url (default http://127.0.0.1:11434)? Start it with \`ollama serve\`.`;
    return undefined;
  };
}

/** A fetch that gives up when no response has started within `ms`; a started stream runs on. */
function fetchWithStartTimeout(base: typeof fetch, ms: number): typeof fetch {
  return async (input, init) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException(`no response from Ollama within ${ms} ms`, "TimeoutError")), ms);
    const signal = init?.signal ? AbortSignal.any([init.signal, controller.signal]) : controller.signal;
    try {
      return await base(input, { ...init, signal });
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * Builds the chat model for a `provider: ollama` entry. Requests carry the trace id as `X-Trace-Id`; failures
 * become MODEL_CALL_FAILED errors naming the model and the trace id.
 */
export function createOllamaModel(config: ModelConfig, env: ModelProviderEnv): BaseChatModel {
  const where = env.where;
  if (!config.model) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" needs the Ollama model tag`, {
      where: `${where}.model`,
      hint: "Set model: to a tag `ollama list` shows, e.g. model: llama3.2.",
    });
  }
  const { headers: extraHeaders, fetch: extraFetch, ...extraFields } = (config.options ?? {}) as Partial<ChatOllamaInput>;
  const traced = fetchWithTraceId(extraFetch ?? globalThis.fetch);
  const headers = {
    ...(extraHeaders instanceof Headers ? Object.fromEntries(extraHeaders) : extraHeaders),
    ...(config.api_key ? { authorization: `Bearer ${config.api_key}` } : {}),
  };
  const effort = config.reasoning_effort;
  const model = new ChatOllama({
    ...extraFields,
    model: config.model,
    fetch: config.timeout_seconds === undefined ? traced : fetchWithStartTimeout(traced, config.timeout_seconds * 1000),
    headers,
    ...(config.base_url
      ? { baseUrl: config.base_url.replace(/\/+$/, "") }
      : env.env.OLLAMA_BASE_URL
        ? { baseUrl: env.env.OLLAMA_BASE_URL }
        : {}),
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
    ...(config.max_tokens === undefined ? {} : { numPredict: config.max_tokens }),
    ...(config.context_window === undefined ? {} : { numCtx: config.context_window }),
    // ChatOllama types `think` as a boolean; the Ollama API (and its client) also take a level.
    ...(effort && config.supports_thinking ? { think: THINK_LEVEL[effort] as unknown as boolean } : {}),
  });
  return withModelErrorContext(model, config.name, { where, hint: failureHint(config, where) });
}
