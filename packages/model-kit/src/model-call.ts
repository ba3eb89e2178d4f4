import { AntlerError, ErrorCodes, getCurrentTraceId, isAntlerError } from "@antler/kernel";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
  type LangSmithParams,
} from "@langchain/core/language_models/chat_models";
import type { ModelProfile } from "@langchain/core/language_models/profile";
import type { AIMessageChunk, BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";

export interface ModelErrorContextOptions {
  /** Where the model is configured, e.g. `models[2]`; becomes the error's `where`. */
  where?: string | undefined;
  /** What to tell the user for this failure (e.g. which key to check on a 401); `undefined` for no hint. */
  hint?: ((error: unknown, status: number | undefined) => string | undefined) | undefined;
}

function isAbort(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === "AbortError" || name === "ModelAbortError" || name === "APIUserAbortError";
}

/**
 * The HTTP status a provider SDK put on its error, if any (`status`; Ollama's client calls it `status_code`, the AWS
 * SDK `$metadata.httpStatusCode`).
 */
export function providerErrorStatus(error: unknown): number | undefined {
  const e = error as { status?: unknown; status_code?: unknown; $metadata?: { httpStatusCode?: unknown } } | null;
  const status = e?.status ?? e?.status_code ?? e?.$metadata?.httpStatusCode;
  return typeof status === "number" ? status : undefined;
}

/**
 * Turns a provider failure into `AntlerError(MODEL_CALL_FAILED)` naming the model and the trace id, keeping
 * the provider error as `cause`. Cancellations and errors that already are AntlerErrors pass through unchanged:
 * a cancelled run is not a model failure.
 */
export function toModelCallError(error: unknown, modelName: string, options: ModelErrorContextOptions = {}): unknown {
  if (isAntlerError(error) || isAbort(error)) return error;
  const traceId = getCurrentTraceId();
  const status = providerErrorStatus(error);
  const reason = error instanceof Error ? error.message : String(error);
  return new AntlerError(
    ErrorCodes.MODEL_CALL_FAILED,
    `model "${modelName}" call failed${status === undefined ? "" : ` (HTTP ${status})`}: ${reason} [trace ${traceId ?? "(none)"}]`,
    {
      where: options.where,
      hint: options.hint?.(error, status),
      cause: error,
      details: { model: modelName, traceId, ...(status === undefined ? {} : { status }) },
    },
  );
}

/**
 * A chat model that behaves exactly like the one it wraps, except that failures surface as
 * `AntlerError(MODEL_CALL_FAILED)` carrying the model name and trace id. It delegates at the Runnable level
 * (invoke/stream) rather than overriding `_generate`, because providers keep bound tools in state that
 * `_generate` alone does not see (ChatOpenAI's `withConfig` returns a new ChatOpenAI with default options).
 */
class ModelCallContextChatModel extends BaseChatModel {
  constructor(
    readonly wrapped: BaseChatModel,
    private readonly target: Runnable<BaseLanguageModelInput, AIMessageChunk>,
    private readonly modelName: string,
    private readonly options: ModelErrorContextOptions,
  ) {
    super({});
  }

  static override lc_name(): string {
    return "ModelCallContextChatModel";
  }

  _llmType(): string {
    // Called from BaseChatModel's field initializers, before `wrapped` is assigned.
    return this.wrapped?._llmType() ?? "antler";
  }

  override get profile(): ModelProfile {
    return this.wrapped.profile;
  }

  override getLsParams(options: this["ParsedCallOptions"]): LangSmithParams {
    return this.wrapped.getLsParams(options);
  }

  override bindTools(
    tools: BindToolsInput[],
    kwargs?: Partial<BaseChatModelCallOptions>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk> {
    if (typeof this.wrapped.bindTools !== "function") {
      throw new AntlerError(ErrorCodes.MODEL_CALL_FAILED, `model "${this.modelName}" does not support tool calling (no bindTools)`, {
        where: this.options.where,
        hint: "Use a provider whose chat model supports tools, or run the agent without tools.",
      });
    }
    return new ModelCallContextChatModel(this.wrapped, this.wrapped.bindTools(tools, kwargs), this.modelName, this.options);
  }

  override async invoke(input: BaseLanguageModelInput, options?: Partial<BaseChatModelCallOptions>): Promise<AIMessageChunk> {
    try {
      return await this.target.invoke(input, options);
    } catch (error) {
      throw toModelCallError(error, this.modelName, this.options);
    }
  }

  override async *_streamIterator(
    input: BaseLanguageModelInput,
    options?: Partial<BaseChatModelCallOptions>,
  ): AsyncGenerator<AIMessageChunk> {
    try {
      for await (const chunk of await this.target.stream(input, options)) yield chunk;
    } catch (error) {
      throw toModelCallError(error, this.modelName, this.options);
    }
  }

  // The two methods below only serve BaseChatModel's own entry points (generate, streamEvents); invoke and stream
  // are delegated above so the wrapped model does its own callbacks and tracing.
  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    try {
      const message = await this.target.invoke(messages, options);
      return { generations: [{ text: message.text, message }] };
    } catch (error) {
      throw toModelCallError(error, this.modelName, this.options);
    }
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    try {
      for await (const chunk of await this.target.stream(messages, options)) {
        const generation = new ChatGenerationChunk({ text: chunk.text, message: chunk });
        yield generation;
        await runManager?.handleLLMNewToken(chunk.text, undefined, undefined, undefined, undefined, { chunk: generation });
      }
    } catch (error) {
      throw toModelCallError(error, this.modelName, this.options);
    }
  }
}

/**
 * Wraps a provider's chat model so every failed call (invoke, stream, inside `createAgent` after `bindTools`)
 * throws `AntlerError(MODEL_CALL_FAILED)` naming `modelName` and the current trace id, with the provider error
 * as `cause`. The result is still a `BaseChatModel` and supports `bindTools`.
 */
export function withModelErrorContext(model: BaseChatModel, modelName: string, options: ModelErrorContextOptions = {}): BaseChatModel {
  return new ModelCallContextChatModel(model, model, modelName, options);
}
