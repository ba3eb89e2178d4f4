import { AntlerError, ErrorCodes, getCurrentTraceId } from "@antler/kernel";
import { type CompleteAssistantMessage, streamAssistantMessage, toAIMessage, usageFrom } from "@antler/kernel/testing/replay";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import { BaseChatModel, type BaseChatModelCallOptions, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import type { AIMessageChunk, BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";
import { commonLineCount, renderRequestLines, sharedLeadingMessages, unifiedLineDiff } from "./diff.js";
import { CassetteErrorCodes } from "./errors.js";
import { appendExchange, type CassetteExchange, type LoadedCassette, type LoadedExchange, serializeResponse } from "./format.js";
import { createScrubber, type NormalizationDirs, type NormalizedRequest, normalizeRequest, requestHash } from "./normalize.js";

export interface CassetteCallOptions extends BaseChatModelCallOptions {
  tools?: BindToolsInput[];
}

export interface CassetteReplayOptions {
  cassette: LoadedCassette;
  dirs?: NormalizationDirs | undefined;
  /** Prefix for error messages, e.g. `models[2]`. */
  where?: string | undefined;
}

function completeMessage(exchange: LoadedExchange): CompleteAssistantMessage {
  const { response, line } = exchange;
  return {
    id: response.id ?? `cassette-${line}`,
    content: response.content,
    toolCalls: response.tool_calls.map((call, i) => ({ name: call.name, args: call.args, id: call.id ?? `call_${line}_${i}` })),
    usage: usageFrom(response.usage_metadata),
  };
}

/**
 * Replays a recorded cassette as a chat model. Requests are matched by the hash of their normalized form, so
 * concurrent threads may ask in any order; a request recorded several times gets its responses in file order.
 */
export class CassetteChatModel extends BaseChatModel<CassetteCallOptions> {
  readonly cassette: LoadedCassette;
  private readonly scrub: (text: string) => string;
  private readonly where: string | undefined;
  private readonly byHash = new Map<string, LoadedExchange[]>();
  private readonly played = new Map<string, number>();

  constructor(options: CassetteReplayOptions) {
    super({});
    this.cassette = options.cassette;
    this.where = options.where;
    this.scrub = createScrubber(options.dirs);
    for (const exchange of options.cassette.exchanges) {
      const hash = requestHash(exchange.request);
      const list = this.byHash.get(hash);
      if (list) list.push(exchange);
      else this.byHash.set(hash, [exchange]);
    }
  }

  static override lc_name(): string {
    return "CassetteChatModel";
  }

  _llmType(): string {
    return "cassette";
  }

  override bindTools(
    tools: BindToolsInput[],
    kwargs?: Partial<CassetteCallOptions>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, CassetteCallOptions> {
    return this.withConfig({ ...kwargs, tools });
  }

  /** Recorded exchanges not handed out yet, in file order. A finished replay that leaves some usually drifted. */
  get unplayed(): LoadedExchange[] {
    const out: LoadedExchange[] = [];
    for (const [hash, list] of this.byHash) out.push(...list.slice(this.played.get(hash) ?? 0));
    return out.sort((a, b) => a.line - b.line);
  }

  /** Normalizes a request the way this cassette matches it (useful to debug a mismatch). */
  normalize(messages: readonly BaseMessage[], tools?: readonly BindToolsInput[]): NormalizedRequest {
    return normalizeRequest(messages, tools, this.scrub);
  }

  // Synchronous on purpose: with no await between lookup and counter update, concurrent calls cannot take the
  // same recording twice.
  private take(messages: readonly BaseMessage[], tools: readonly BindToolsInput[] | undefined): LoadedExchange {
    const request = this.normalize(messages, tools);
    const hash = requestHash(request);
    const list = this.byHash.get(hash);
    if (!list) throw this.mismatch(request);
    const index = this.played.get(hash) ?? 0;
    const exchange = list[index];
    if (!exchange) {
      throw new AntlerError(
        CassetteErrorCodes.CASSETTE_EXHAUSTED,
        `this request was recorded ${list.length} time(s) (line ${list.map((e) => e.line).join(", ")}) and every recording was already played; cassette ${this.cassette.path}, trace ${getCurrentTraceId() ?? "(none)"}`,
        {
          where: this.where,
          hint: "The run asked the same question more often than the recorded run did. Re-record the cassette (options.mode: record), or look for a retry loop.",
          details: { path: this.cassette.path, traceId: getCurrentTraceId(), lines: list.map((e) => e.line) },
        },
      );
    }
    this.played.set(hash, index + 1);
    return exchange;
  }

  private mismatch(request: NormalizedRequest): AntlerError {
    const traceId = getCurrentTraceId();
    let shared = -1;
    let tied: LoadedExchange[] = [];
    for (const exchange of this.cassette.exchanges) {
      const n = sharedLeadingMessages(exchange.request, request);
      if (n > shared) {
        shared = n;
        tied = [exchange];
      } else if (n === shared) {
        tied.push(exchange);
      }
    }
    // Among recordings that share as many leading messages, the one with the most lines in common gives the
    // shortest diff; file order breaks the remaining ties.
    const actualLines = renderRequestLines(request);
    let closest: LoadedExchange | undefined;
    let common = -1;
    for (const exchange of tied) {
      const n = tied.length === 1 ? 0 : commonLineCount(renderRequestLines(exchange.request), actualLines);
      if (n > common) {
        common = n;
        closest = exchange;
      }
    }
    const lines = [`no recorded exchange matches this model request (cassette ${this.cassette.path}, trace ${traceId ?? "(none)"})`];
    if (closest) {
      lines.push(
        `closest recording: line ${closest.line}, sharing ${shared} leading message(s) of ${request.messages.length}; "-" is recorded, "+" is this request:`,
      );
      lines.push(
        unifiedLineDiff(renderRequestLines(closest.request), actualLines, {
          a: `recorded (${this.cassette.path}:${closest.line})`,
          b: "actual",
        }),
      );
    } else {
      lines.push("the cassette has no recorded exchanges. This request:", ...actualLines.map((l) => `+${l}`));
    }
    return new AntlerError(CassetteErrorCodes.CASSETTE_MISMATCH, lines.join("\n"), {
      where: this.where,
      hint: "The prompt, tools or conversation changed since recording. Re-record the cassette (options.mode: record with options.record_from), or undo the change the diff shows.",
      details: { path: this.cassette.path, traceId, closestLine: closest?.line, sharedMessages: Math.max(shared, 0) },
    });
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const message = toAIMessage(completeMessage(this.take(messages, options.tools)));
    return { generations: [{ text: message.text, message }] };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    yield* streamAssistantMessage(completeMessage(this.take(messages, options.tools)), runManager, options.signal);
  }
}

export interface CassetteRecorderOptions {
  /** The JSONL file; appended to, created with its folders and a header line when new. */
  path: string;
  /** The real model whose answers are recorded. */
  model: BaseChatModel;
  /** Name written to the header's `recorded_from`. */
  recordedFrom: string;
  dirs?: NormalizationDirs | undefined;
  note?: string | undefined;
}

// Call options that describe this call rather than the request to the model; they are not forwarded as kwargs.
const NOT_FORWARDED = new Set([
  "tools",
  "signal",
  "timeout",
  "maxConcurrency",
  "promptIndex",
  "callbacks",
  "runName",
  "runId",
  "tags",
  "metadata",
  "configurable",
  "recursionLimit",
]);

/**
 * Records a real model's answers into a cassette while passing them through. Tools bound to the recorder are
 * bound to the real model too, so the recording is made with the exact tool definitions the agent uses.
 */
export class CassetteRecorder extends BaseChatModel<CassetteCallOptions> {
  readonly path: string;
  private readonly model: BaseChatModel;
  private readonly header: { recordedFrom: string; note: string | undefined };
  private readonly scrub: (text: string) => string;
  private writes: Promise<void> = Promise.resolve();

  constructor(options: CassetteRecorderOptions) {
    super({});
    this.path = options.path;
    this.model = options.model;
    this.header = { recordedFrom: options.recordedFrom, note: options.note };
    this.scrub = createScrubber(options.dirs);
  }

  static override lc_name(): string {
    return "CassetteRecorder";
  }

  _llmType(): string {
    return "cassette-recorder";
  }

  override bindTools(
    tools: BindToolsInput[],
    kwargs?: Partial<CassetteCallOptions>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, CassetteCallOptions> {
    return this.withConfig({ ...kwargs, tools });
  }

  /** Resolves once every exchange recorded so far is on disk. */
  async flush(): Promise<void> {
    await this.writes;
  }

  private target(options: this["ParsedCallOptions"]): Runnable<BaseLanguageModelInput, AIMessageChunk> {
    const kwargs = Object.fromEntries(Object.entries(options).filter(([key, value]) => !NOT_FORWARDED.has(key) && value !== undefined));
    const tools = options.tools ?? [];
    if (tools.length > 0) {
      if (typeof this.model.bindTools !== "function") {
        throw new AntlerError(
          ErrorCodes.MODEL_CALL_FAILED,
          `cannot record tool calls: model "${this.header.recordedFrom}" does not support bindTools`,
          {
            hint: "Record from a model whose provider supports tool calling.",
          },
        );
      }
      return this.model.bindTools(tools, kwargs);
    }
    return Object.keys(kwargs).length > 0 ? this.model.withConfig(kwargs) : this.model;
  }

  private record(messages: readonly BaseMessage[], tools: readonly BindToolsInput[] | undefined, reply: AIMessageChunk): Promise<void> {
    const exchange: CassetteExchange = { request: normalizeRequest(messages, tools, this.scrub), response: serializeResponse(reply) };
    // One append at a time, in completion order: concurrent appends to one file could interleave lines.
    const write = this.writes.catch(() => undefined).then(() => appendExchange(this.path, exchange, this.header));
    this.writes = write;
    return write;
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const reply = await this.target(options).invoke(messages, { signal: options.signal });
    await this.record(messages, options.tools, reply);
    return { generations: [{ text: reply.text, message: reply }] };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    let aggregate: AIMessageChunk | undefined;
    for await (const chunk of await this.target(options).stream(messages, { signal: options.signal })) {
      aggregate = aggregate ? aggregate.concat(chunk) : chunk;
      const generation = new ChatGenerationChunk({ text: chunk.text, message: chunk });
      yield generation;
      await runManager?.handleLLMNewToken(chunk.text, undefined, undefined, undefined, undefined, { chunk: generation });
    }
    if (aggregate) await this.record(messages, options.tools, aggregate);
  }
}
