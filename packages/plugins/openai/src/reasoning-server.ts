import { type ReasoningPassback, reasoningToSendBack, withReasoningSentBack } from "@antler/model-kit";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage, BaseMessageChunk } from "@langchain/core/messages";
import type { ChatGenerationChunk, ChatResult } from "@langchain/core/outputs";
import { type BaseChatOpenAIFields, ChatOpenAICompletions } from "@langchain/openai";

/** Where an OpenAI-compatible server puts reasoning in a message or delta. */
export type ReasoningField = "reasoning_content" | "reasoning";

/** Where the reasoning plan of one call travels from the LangChain messages to the request body. */
const PLAN = Symbol("antler.openai.reasoningPlan");
type Planned = { [PLAN]?: Array<string | undefined> };
type Options = ChatOpenAICompletions["ParsedCallOptions"];
type RequestOptions = Parameters<ChatOpenAICompletions["completionWithRetry"]>[1];
type Delta = Parameters<ChatOpenAICompletions["_convertCompletionsDeltaToBaseMessageChunk"]>[0];
type RawChunk = Parameters<ChatOpenAICompletions["_convertCompletionsDeltaToBaseMessageChunk"]>[1];
type Role = Parameters<ChatOpenAICompletions["_convertCompletionsDeltaToBaseMessageChunk"]>[2];
type WireMessage = Parameters<ChatOpenAICompletions["_convertCompletionsMessageToBaseMessage"]>[0];
type RawCompletion = Parameters<ChatOpenAICompletions["_convertCompletionsMessageToBaseMessage"]>[1];

/** Copies a server's `reasoning` field to `additional_kwargs.reasoning_content`, where runs and threads read it. */
function liftReasoning<M extends BaseMessage>(message: M, source: unknown, field: ReasoningField): M {
  const reasoning = (source as Record<string, unknown> | undefined)?.[field];
  if (field !== "reasoning_content" && typeof reasoning === "string") message.additional_kwargs.reasoning_content = reasoning;
  return message;
}

/**
 * Chat Completions against an OpenAI-compatible reasoning server (vLLM, SGLang, OpenRouter, Qwen/DashScope):
 * reasoning read from `field` of each delta and message, and sent back on assistant messages under the same
 * field as `passback` says. `ChatOpenAICompletions` reads only `reasoning_content` and never sends it back.
 */
export class ReasoningServerChatModel extends ChatOpenAICompletions {
  constructor(
    fields: BaseChatOpenAIFields,
    private readonly field: ReasoningField,
    private readonly passback: ReasoningPassback,
  ) {
    super(fields);
  }

  private planned(messages: BaseMessage[], options: Options): Options {
    if (this.passback === "none") return options;
    const plan = reasoningToSendBack(messages, this.passback);
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

  // The native event stream parses deltas without the hook below; the generic one goes through the chunks.
  override _streamChatModelEvents(messages: BaseMessage[], options: Options, runManager?: CallbackManagerForLLMRun) {
    return BaseChatModel.prototype._streamChatModelEvents.call(this, messages, options, runManager);
  }

  override _convertCompletionsDeltaToBaseMessageChunk(delta: Delta, rawResponse: RawChunk, defaultRole?: Role): BaseMessageChunk {
    return liftReasoning(super._convertCompletionsDeltaToBaseMessageChunk(delta, rawResponse, defaultRole), delta, this.field);
  }

  override _convertCompletionsMessageToBaseMessage(message: WireMessage, rawResponse: RawCompletion): BaseMessage {
    return liftReasoning(super._convertCompletionsMessageToBaseMessage(message, rawResponse), message, this.field);
  }

  // biome-ignore lint/suspicious/noExplicitAny: the base method is overloaded (streaming or not); this serves both and returns what it returns.
  override completionWithRetry(request: any, requestOptions?: RequestOptions): Promise<any> {
    const { [PLAN]: plan, ...rest } = (requestOptions ?? {}) as RequestOptions & Planned;
    const messages = plan
      ? withReasoningSentBack((request as { messages: Array<{ role?: unknown }> }).messages, plan, this.field)
      : request.messages;
    return super.completionWithRetry({ ...request, messages }, rest as RequestOptions);
  }
}
