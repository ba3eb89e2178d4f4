import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import { BaseChatModel, type BaseChatModelCallOptions, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import type { AIMessageChunk, BaseMessage } from "@langchain/core/messages";
import type { ChatGenerationChunk, ChatResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";
import { AntlerError } from "../errors.js";
import { boundToolNames, type CompleteAssistantMessage, streamAssistantMessage, toAIMessage, usageFrom } from "./replay.js";

/**
 * The code of the error a scripted model throws when its script has no step for a call. The runtime's model error
 * handling lets it through (it never answers for a test's script), so the run, and the test, fail with it.
 */
export const SCRIPT_EXHAUSTED = "ANTLER_ERR_SCRIPT_EXHAUSTED";

export interface ScriptedToolCall {
  name: string;
  args: Record<string, unknown>;
  /** Default `call_<callIndex>_<i>`. */
  id?: string;
}

/** One scripted model turn. Shared with the loopback OpenAI-compatible server. */
export interface ScriptedStep {
  text?: string;
  /** Reasoning streamed before the text, as a thinking model sends it (`additional_kwargs.reasoning_content`); the scripted model only (the loopback OpenAI-compatible server does not send it). */
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  usage?: { input_tokens: number; output_tokens: number };
  /** Wait this long (timer, off-CPU) before answering; the call's abort signal cuts it short. */
  delayMs?: number;
  /** Fail this call (after `delayMs`) with this error, or an Error with this message. */
  error?: Error | string;
  /** Message id; default `<idPrefix>-<callIndex>` (see `ScriptedChatModelOptions.idPrefix`). */
  id?: string;
}

/** Computes a step from what the model was asked; `callIndex` counts calls from 0. */
export type ScriptFunction = (messages: BaseMessage[], callIndex: number) => ScriptedStep | Promise<ScriptedStep>;

export interface ScriptedChatModelOptions {
  /** Answers for calls 0, 1, 2, ... */
  steps?: readonly ScriptedStep[];
  /** Answers every call past `steps` (or every call, without steps). */
  respond?: ScriptFunction;
  /**
   * Reply ids are `<idPrefix>-<callIndex>`. Default `scripted-<8 random hex digits>`, new per instance: models sharing
   * a thread (a lead and a subagent, two clients on one checkpointer) must not reuse an id, or a later reply
   * replaces an earlier one in the thread's messages.
   */
  idPrefix?: string;
}

export type Script = readonly ScriptedStep[] | ScriptFunction | ScriptedChatModelOptions;

export interface ScriptedCall {
  readonly messages: BaseMessage[];
  /** Sorted names of the tools bound for this call. */
  readonly tools: string[];
}

export interface ScriptedCallOptions extends BaseChatModelCallOptions {
  tools?: BindToolsInput[];
}

/** Default id of the i-th tool call of call n; the loopback server uses the same scheme. */
export function scriptedToolCallId(callIndex: number, toolIndex: number): string {
  return `call_${callIndex}_${toolIndex}`;
}

/**
 * A real chat model that answers from a script, for deterministic tests and benchmarks. It works inside
 * `createAgent` (tools bind through call options), streams like a provider (text deltas, tool call chunks,
 * usage last), and records every call.
 */
export class ScriptedChatModel extends BaseChatModel<ScriptedCallOptions> {
  readonly calls: ScriptedCall[] = [];
  readonly idPrefix: string;
  private readonly steps: readonly ScriptedStep[];
  private readonly respond: ScriptFunction | undefined;

  constructor(script: Script) {
    super({});
    const options: ScriptedChatModelOptions =
      typeof script === "function" ? { respond: script } : Array.isArray(script) ? { steps: script } : (script as ScriptedChatModelOptions);
    this.steps = options.steps ?? [];
    this.respond = options.respond;
    this.idPrefix = options.idPrefix ?? `scripted-${randomUUID().slice(0, 8)}`;
  }

  static override lc_name(): string {
    return "ScriptedChatModel";
  }

  _llmType(): string {
    return "scripted";
  }

  get callCount(): number {
    return this.calls.length;
  }

  override bindTools(
    tools: BindToolsInput[],
    kwargs?: Partial<ScriptedCallOptions>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, ScriptedCallOptions> {
    return this.withConfig({ ...kwargs, tools });
  }

  private async next(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<CompleteAssistantMessage> {
    const callIndex = this.calls.length;
    this.calls.push({ messages: [...messages], tools: boundToolNames(options.tools) });
    const step = this.steps[callIndex] ?? (await this.respond?.(messages, callIndex));
    if (!step) {
      const last = messages.at(-1);
      throw new AntlerError(
        SCRIPT_EXHAUSTED,
        `ScriptedChatModel: no scripted step for call #${callIndex} (the script has ${this.steps.length} step(s)${this.respond ? " and its function returned nothing" : ""}). ` +
          `Last message (${last?.getType() ?? "none"}): ${JSON.stringify((last?.text ?? "").slice(0, 200))}`,
        { hint: "Add a step for this call to the script, or a `respond` function that answers every call past the steps." },
      );
    }
    if (step.delayMs !== undefined && step.delayMs > 0) await sleep(step.delayMs, undefined, { signal: options.signal });
    options.signal?.throwIfAborted();
    if (step.error !== undefined) throw typeof step.error === "string" ? new Error(step.error) : step.error;
    return {
      id: step.id ?? `${this.idPrefix}-${callIndex}`,
      content: step.text ?? "",
      toolCalls: (step.toolCalls ?? []).map((call, i) => ({
        name: call.name,
        args: call.args,
        id: call.id ?? scriptedToolCallId(callIndex, i),
      })),
      usage: usageFrom(step.usage),
      ...(step.reasoning ? { reasoning: step.reasoning } : {}),
    };
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const message = toAIMessage(await this.next(messages, options));
    return {
      generations: [{ text: message.text, message }],
      llmOutput: message.usage_metadata
        ? {
            tokenUsage: {
              promptTokens: message.usage_metadata.input_tokens,
              completionTokens: message.usage_metadata.output_tokens,
              totalTokens: message.usage_metadata.total_tokens,
            },
          }
        : undefined,
    };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    yield* streamAssistantMessage(await this.next(messages, options), runManager, options.signal);
  }
}

/** `new ScriptedChatModel(steps)`, for one-liners in tests. */
export function scriptedModel(steps: Script): ScriptedChatModel {
  return new ScriptedChatModel(steps);
}
