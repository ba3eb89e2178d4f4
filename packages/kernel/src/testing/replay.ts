// `@antler/kernel/testing/replay`: a finished assistant turn (scripted in a test, or recorded in a cassette) as the
// message, stream chunks and usage a real provider would give. Shared by the scripted model of the test kit and
// the cassette plugin; it loads no test runner.
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type MessageContent, type UsageMetadata } from "@langchain/core/messages";
import { ChatGenerationChunk } from "@langchain/core/outputs";

/** A finished assistant turn, as a scripted step or a cassette line describes it. */
export interface CompleteAssistantMessage {
  readonly id: string;
  readonly content: MessageContent;
  readonly toolCalls: ReadonlyArray<{ readonly name: string; readonly args: Record<string, unknown>; readonly id: string }>;
  readonly usage?: UsageMetadata | undefined;
  /**
   * A thinking model's reasoning, before the answer. It travels as `additional_kwargs.reasoning_content`, the form
   * DeepSeek, Qwen and other OpenAI-compatible servers give it.
   */
  readonly reasoning?: string | undefined;
}

/**
 * Splits text the way a provider streams it: word by word, whitespace kept with the word before it, so the
 * deltas concatenate back to exactly the original text.
 */
export function splitTextDeltas(text: string): string[] {
  return text.match(/\s+|\S+\s*/g) ?? [];
}

export function toAIMessage(message: CompleteAssistantMessage): AIMessage {
  return new AIMessage({
    id: message.id,
    content: message.content,
    tool_calls: message.toolCalls.map((call) => ({ type: "tool_call" as const, name: call.name, args: { ...call.args }, id: call.id })),
    usage_metadata: message.usage,
    ...(message.reasoning ? { additional_kwargs: { reasoning_content: message.reasoning } } : {}),
  });
}

/**
 * The chunks a streaming provider would send for `message`: reasoning deltas, text deltas, then each tool call as
 * tool_call_chunks (name and id first, arguments in two pieces), and usage only on the last chunk. Every chunk
 * carries the same message id, so consumers that group deltas by id see one message.
 */
export function toMessageChunks(message: CompleteAssistantMessage): AIMessageChunk[] {
  const chunks: AIMessageChunk[] = [];
  const id = message.id;
  for (const delta of splitTextDeltas(message.reasoning ?? "")) {
    chunks.push(new AIMessageChunk({ id, content: "", additional_kwargs: { reasoning_content: delta } }));
  }
  if (typeof message.content === "string") {
    for (const delta of splitTextDeltas(message.content)) chunks.push(new AIMessageChunk({ id, content: delta }));
  } else if (message.content.length > 0) {
    // Structured content (provider blocks) has no meaningful word split; it travels whole, as providers send it.
    chunks.push(new AIMessageChunk({ id, content: message.content }));
  }
  message.toolCalls.forEach((call, index) => {
    const args = JSON.stringify(call.args);
    const cut = Math.ceil(args.length / 2);
    chunks.push(
      new AIMessageChunk({
        id,
        content: "",
        tool_call_chunks: [{ type: "tool_call_chunk", id: call.id, name: call.name, args: args.slice(0, cut), index }],
      }),
    );
    chunks.push(new AIMessageChunk({ id, content: "", tool_call_chunks: [{ type: "tool_call_chunk", args: args.slice(cut), index }] }));
  });
  if (message.usage || chunks.length === 0) {
    chunks.push(new AIMessageChunk({ id, content: "", usage_metadata: message.usage }));
  }
  return chunks;
}

/**
 * Yields `toMessageChunks(message)` as generation chunks and reports each to the run manager, which is how
 * LangGraph's `streamMode: "messages"` and other callback consumers see the deltas.
 */
export async function* streamAssistantMessage(
  message: CompleteAssistantMessage,
  runManager: CallbackManagerForLLMRun | undefined,
  signal?: AbortSignal,
): AsyncGenerator<ChatGenerationChunk> {
  for (const chunk of toMessageChunks(message)) {
    signal?.throwIfAborted();
    const text = chunk.text;
    const generation = new ChatGenerationChunk({ text, message: chunk });
    yield generation;
    await runManager?.handleLLMNewToken(text, undefined, undefined, undefined, undefined, { chunk: generation });
  }
}

export function usageFrom(
  usage: { input_tokens: number; output_tokens: number; total_tokens?: number } | undefined,
): UsageMetadata | undefined {
  if (!usage) return undefined;
  return {
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    total_tokens: usage.total_tokens ?? usage.input_tokens + usage.output_tokens,
  };
}

/** The name of a tool as bound to a model (a LangChain tool, or an OpenAI-style `{ function: { name } }`). */
export function boundToolName(tool: BindToolsInput): string | undefined {
  if (tool === null || typeof tool !== "object") return undefined;
  const record = tool as { name?: unknown; function?: { name?: unknown } };
  if (typeof record.name === "string") return record.name;
  if (typeof record.function?.name === "string") return record.function.name;
  return undefined;
}

/** The sorted, de-duplicated names of the tools bound to a model call. */
export function boundToolNames(tools: readonly BindToolsInput[] | undefined): string[] {
  return [...new Set((tools ?? []).map(boundToolName).filter((n): n is string => n !== undefined))].sort();
}
