// The model call plan: what `kernel.createModel` wraps an entry with fallbacks, retries, limits or pricing in (through
// the MODEL_CALL_PLANNER the runtime provides). An entry without them never reaches this module.
import { setTimeout as sleep } from "node:timers/promises";
import {
  AntlerError,
  ErrorCodes,
  emitCustomEvent,
  getCurrentTraceId,
  isAntlerError,
  type Logger,
  MODEL_CALL_STAMP_KEY,
  type ModelCallPlanner,
  type ModelCallStamp,
  type ModelConfig,
  modelCallStamp,
} from "@antler/kernel";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { CallbackManagerForLLMRun, Callbacks } from "@langchain/core/callbacks/manager";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
  type LangSmithParams,
} from "@langchain/core/language_models/chat_models";
import type { ModelProfile } from "@langchain/core/language_models/profile";
import { AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";
import { ModelLimiter, type ModelLimits, type ModelRateStore } from "./limits.js";
import { providerErrorStatus } from "./model-call.js";
import { modelCallCostUsd } from "./pricing.js";

/** Why an attempt did not answer. */
export type AttemptReason = "rate_limited" | "server_error" | "timeout" | "unreachable" | "refusal";

/** One attempt of a model call, as the `model_attempt` event and the run record carry it. */
export interface ModelAttempt {
  /** The configured model tried. */
  model: string;
  /** 1-based, across the whole call (retries and fallbacks). */
  attempt: number;
  outcome: "success" | "error" | "refused";
  reason?: AttemptReason;
  status?: number;
  /** The error text, for a failed attempt. */
  error?: string;
  /** What came next: the same model again after `wait_ms`, the next fallback, or nothing (the call failed). */
  next?: "retry" | "fallback" | "give_up";
  next_model?: string;
  wait_ms?: number;
  /** Where the wait came from: the provider's Retry-After header, or the backoff. */
  wait_source?: "retry_after" | "backoff";
}

/** One model the call may try: the asked one first, then its fallbacks (depth first, each once). */
export interface CallTarget {
  readonly name: string;
  readonly model: Runnable<BaseLanguageModelInput, AIMessageChunk>;
  /** The provider's chat model behind `model` (for bindTools). */
  readonly base: BaseChatModel;
  readonly config: ModelConfig | undefined;
}

export interface ResilientModelOptions {
  readonly name: string;
  readonly where: string;
  readonly logger: Logger;
  readonly limiter: ModelLimiter;
}

const DEFAULT_QUEUE_TIMEOUT_SECONDS = 60;

function limitsOf(config: ModelConfig | undefined): ModelLimits | undefined {
  if (!config || (config.max_concurrency === undefined && config.requests_per_minute === undefined)) return undefined;
  return {
    maxConcurrency: config.max_concurrency,
    requestsPerMinute: config.requests_per_minute,
    queueTimeoutMs: (config.queue_timeout_seconds ?? DEFAULT_QUEUE_TIMEOUT_SECONDS) * 1000,
  };
}

function isAbort(error: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return true;
  const name = (error as { name?: unknown } | null)?.name;
  return (
    name === "AbortError" || name === "ModelAbortError" || name === "APIUserAbortError" || isAntlerError(error, ErrorCodes.RUN_CANCELLED)
  );
}

/** The provider error under an AntlerError (model-kit keeps it as `cause`), or the error itself. */
function providerError(error: unknown): unknown {
  return isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED) && error.cause !== undefined ? error.cause : error;
}

function headerOf(error: unknown, name: string): string | undefined {
  // The AWS SDK keeps the response (and its headers) on the error as `$response`.
  const e = error as { headers?: unknown; $response?: { headers?: unknown } } | null;
  const headers = e?.headers ?? e?.$response?.headers;
  if (!headers || typeof headers !== "object") return undefined;
  const get = (headers as { get?: unknown }).get;
  const value =
    typeof get === "function" ? (get as (n: string) => unknown).call(headers, name) : (headers as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * The wait a `Retry-After` value asks for, in ms: delta-seconds (`"120"`, fractions allowed) or an HTTP date
 * (`"Wed, 21 Oct 2026 07:28:00 GMT"`, a date past is 0). Undefined for a value that is neither.
 */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const AWS_RETRYABLE: Readonly<Record<string, AttemptReason>> = {
  ThrottlingException: "rate_limited",
  ServiceUnavailableException: "server_error",
  InternalServerException: "server_error",
  ModelNotReadyException: "server_error",
  ModelStreamErrorException: "server_error",
};

/** What a failure means for the next attempt; undefined when no other attempt could do better (400, 401, ...). */
export function classifyFailure(error: unknown): { reason: AttemptReason; status?: number; retryAfterMs?: number } | undefined {
  if (isAntlerError(error, ErrorCodes.MODEL_RATE_LIMITED)) return { reason: "rate_limited" };
  const cause = providerError(error);
  const rawStatus = providerErrorStatus(cause) ?? (isAntlerError(error) ? error.details.status : undefined);
  const status = typeof rawStatus === "number" ? rawStatus : undefined;
  const retryAfterMs = parseRetryAfter(headerOf(cause, "retry-after")) ?? parseRetryAfter(headerOf(cause, "retry-after-ms"), 0);
  const withStatus = (reason: AttemptReason) => ({
    reason,
    ...(status !== undefined ? { status } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
  if (status === 429) return withStatus("rate_limited");
  if (status !== undefined && status >= 500) return withStatus("server_error");
  if (status !== undefined) return undefined;
  const name = String((cause as { name?: unknown } | null)?.name ?? "");
  // An AWS SDK error raised inside a started event stream (Bedrock's ConverseStream) has no HTTP status, only its name.
  const aws = AWS_RETRYABLE[name];
  if (aws) return withStatus(aws);
  const message = String((cause as { message?: unknown } | null)?.message ?? "");
  if (/timeout/i.test(name) || /timed? ?out/i.test(message)) return withStatus("timeout");
  const code = String(
    (cause as { code?: unknown; cause?: { code?: unknown } } | null)?.code ?? (cause as { cause?: { code?: unknown } })?.cause?.code ?? "",
  );
  if (
    name === "APIConnectionError" ||
    /ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|UND_ERR/.test(code) ||
    /fetch failed|connection error/i.test(message)
  ) {
    return withStatus("unreachable");
  }
  return undefined;
}

/** A reply that declines to answer: OpenAI's `refusal`, a content filter, Anthropic's `refusal` stop reason. */
export function isRefusal(message: BaseMessage): boolean {
  const meta = (message.response_metadata ?? {}) as Record<string, unknown>;
  const refusal = (message.additional_kwargs as { refusal?: unknown } | undefined)?.refusal;
  return (
    (typeof refusal === "string" && refusal.length > 0) ||
    meta.finish_reason === "content_filter" ||
    meta.stop_reason === "refusal" ||
    meta.finishReason === "SAFETY"
  );
}

/** Has this chunk put something in front of the user (text or a tool call)? */
function visible(chunk: AIMessageChunk): boolean {
  return chunk.text.length > 0 || (chunk.tool_call_chunks?.length ?? 0) > 0;
}

/** The call's options with a callback that notes the first token a streaming provider hands to the user. */
function watchingTokens(options: Partial<BaseChatModelCallOptions> | undefined, onToken: () => void): Partial<BaseChatModelCallOptions> {
  const handler = BaseCallbackHandler.fromMethods({
    handleLLMNewToken(token: string, _idx: unknown, _runId: unknown, _parent: unknown, _tags: unknown, fields?: { chunk?: unknown }) {
      const message = (fields?.chunk as { message?: unknown } | undefined)?.message;
      if (token.length > 0 || (AIMessageChunk.isInstance(message) && visible(message))) onToken();
    },
  });
  const callbacks = options?.callbacks as Callbacks | undefined;
  let watched: Callbacks;
  if (callbacks === undefined) watched = [handler];
  else if (Array.isArray(callbacks)) watched = [...callbacks, handler];
  else watched = callbacks.copy([handler], false);
  return { ...options, callbacks: watched };
}

function errorText(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]?.slice(0, 500) ?? "";
}

/**
 * Tries a call's targets in order, each with its retries, inside each target's limits. `run(target, options,
 * onVisible)` makes one attempt and returns its reply; `onVisible` is called by the attempt when output reached
 * the user, after which a failure is final (no splicing of two answers).
 */
class CallPlan {
  readonly attempts: ModelAttempt[] = [];
  private shown = false;

  constructor(
    private readonly targets: readonly CallTarget[],
    private readonly options: ResilientModelOptions,
    private readonly callOptions: Partial<BaseChatModelCallOptions> | undefined,
  ) {}

  markVisible = (): void => {
    this.shown = true;
  };

  get outputShown(): boolean {
    return this.shown;
  }

  async execute<T extends AIMessageChunk>(attempt: (target: CallTarget) => Promise<T>): Promise<T> {
    const signal = this.callOptions?.signal;
    let lastError: unknown;
    for (const [t, target] of this.targets.entries()) {
      const retry = target.config?.retry;
      const limits = limitsOf(target.config);
      const isLast = t === this.targets.length - 1;
      for (let tried = 0; ; tried++) {
        let wait = 0;
        let slot: { release(): void } | undefined;
        try {
          if (limits) slot = await this.options.limiter.acquire(target.name, limits, signal ?? undefined);
          const reply = await attempt(target);
          if (!this.shown && !isLast && isRefusal(reply)) {
            await this.record({
              model: target.name,
              outcome: "refused",
              reason: "refusal",
              next: "fallback",
              next_model: this.targets[t + 1]?.name,
            });
            break;
          }
          return await this.succeed(reply, target);
        } catch (error) {
          if (isAbort(error, signal ?? undefined)) throw error;
          const failure = classifyFailure(error);
          // A 400, a 401, or output the user already saw: another attempt cannot make this call right.
          if (!failure || this.shown) throw this.attempts.length > 0 ? await this.giveUp(target, error, failure) : error;
          lastError = error;
          const maxWait = (retry?.max_wait_seconds ?? 60) * 1000;
          const asked = failure.retryAfterMs;
          const canRetry =
            retry !== undefined && tried < retry.attempts && failure.reason !== "refusal" && (asked === undefined || asked <= maxWait);
          const base: Omit<ModelAttempt, "attempt"> = {
            model: target.name,
            outcome: "error",
            reason: failure.reason,
            ...(failure.status !== undefined ? { status: failure.status } : {}),
            error: errorText(providerError(error)),
          };
          if (canRetry) {
            wait = asked ?? Math.min(maxWait, Math.round((retry.backoff_seconds ?? 1) * 1000 * 2 ** tried));
            await this.record({
              ...base,
              next: "retry",
              next_model: target.name,
              wait_ms: wait,
              wait_source: asked !== undefined ? "retry_after" : "backoff",
            });
          } else if (!isLast) {
            await this.record({ ...base, next: "fallback", next_model: this.targets[t + 1]?.name });
            break;
          } else {
            throw await this.giveUp(target, error, failure, base);
          }
        } finally {
          slot?.release();
        }
        if (wait > 0) await sleep(wait, undefined, { signal: signal ?? undefined });
      }
    }
    // Only reached when the last target refused: its refusal stands (handled above), so this is unreachable in
    // practice; keep the last failure for the type checker.
    throw lastError;
  }

  private async record(attempt: Omit<ModelAttempt, "attempt">): Promise<void> {
    const entry = { ...attempt, attempt: this.attempts.length + 1 } as ModelAttempt;
    this.attempts.push(entry);
    const log = { attempt: entry, trace_id: getCurrentTraceId() };
    if (entry.outcome === "success")
      this.options.logger.info(log, `model "${this.options.name}" answered on attempt ${entry.attempt} (${entry.model})`);
    else
      this.options.logger.warn(
        log,
        `model "${this.options.name}" attempt ${entry.attempt} (${entry.model}) failed: ${entry.reason ?? "error"}`,
      );
    await emitCustomEvent({ type: "model_attempt", asked_model: this.options.name, ...entry }, this.callOptions as never);
  }

  private async succeed<T extends AIMessageChunk>(reply: T, target: CallTarget): Promise<T> {
    if (this.attempts.length > 0) await this.record({ model: target.name, outcome: "success" });
    const inner = modelCallStamp(reply);
    const pricing = target.config?.pricing;
    const usage = reply.usage_metadata;
    const stamp: ModelCallStamp = inner ?? {
      model: target.name,
      cost_usd: pricing && usage ? modelCallCostUsd(pricing, usage) : pricing ? 0 : null,
      attempts: Math.max(1, this.attempts.length),
      ...(this.attempts.length > 0 ? { attempt_log: this.attempts.map((a) => ({ ...a })) } : {}),
    };
    reply.response_metadata = { ...reply.response_metadata, [MODEL_CALL_STAMP_KEY]: stamp };
    return reply;
  }

  private async giveUp(
    target: CallTarget,
    error: unknown,
    failure: ReturnType<typeof classifyFailure>,
    base?: Omit<ModelAttempt, "attempt">,
  ): Promise<AntlerError> {
    await this.record({
      ...(base ?? {
        model: target.name,
        outcome: "error" as const,
        error: errorText(providerError(error)),
        ...(failure ? { reason: failure.reason } : {}),
      }),
      next: "give_up",
    });
    const tried = this.attempts
      .filter((a) => a.outcome !== "success")
      .map((a) => `${a.model}: ${a.status !== undefined ? `HTTP ${a.status}` : (a.reason ?? "error")}`);
    const traceId = getCurrentTraceId();
    return new AntlerError(
      ErrorCodes.MODEL_CALL_FAILED,
      `model "${this.options.name}" call failed after ${this.attempts.length} attempt${this.attempts.length === 1 ? "" : "s"} (${tried.join(", ")}): ${errorText(providerError(error))} [trace ${traceId ?? "(none)"}]`,
      {
        where: this.options.where,
        hint: `Every attempt failed; check the providers of ${[...new Set(this.attempts.map((a) => a.model))].join(", ")}, or add fallbacks to ${this.options.where}.fallbacks.`,
        cause: providerError(error),
        details: { model: this.options.name, traceId, attempts: this.attempts },
      },
    );
  }
}

/**
 * A chat model that tries its targets (the asked model, then its fallbacks) with retries, limits and pricing,
 * and otherwise behaves like the provider's model. Like model-kit's wrapper it delegates at the Runnable level
 * (invoke/stream), so each provider model does its own callbacks and tracing.
 */
export class ResilientChatModel extends BaseChatModel {
  constructor(
    readonly targets: readonly CallTarget[],
    private readonly options: ResilientModelOptions,
  ) {
    super({});
  }

  static override lc_name(): string {
    return "ResilientChatModel";
  }

  private get primary(): CallTarget {
    return this.targets[0] as CallTarget;
  }

  _llmType(): string {
    // Called from BaseChatModel's field initializers, before `targets` is assigned.
    return this.targets?.[0]?.base._llmType() ?? "antler";
  }

  override get profile(): ModelProfile {
    return this.primary.base.profile;
  }

  override getLsParams(options: this["ParsedCallOptions"]): LangSmithParams {
    return this.primary.base.getLsParams(options);
  }

  override bindTools(
    tools: BindToolsInput[],
    kwargs?: Partial<BaseChatModelCallOptions>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk> {
    const bound = this.targets.map((target) => {
      if (typeof target.base.bindTools !== "function") {
        throw new AntlerError(ErrorCodes.MODEL_CALL_FAILED, `model "${target.name}" does not support tool calling (no bindTools)`, {
          where: this.options.where,
          hint: "Give fallbacks that support tools, or run the agent without tools.",
        });
      }
      return { ...target, model: target.base.bindTools(tools, kwargs) };
    });
    return new ResilientChatModel(bound, this.options);
  }

  override async invoke(input: BaseLanguageModelInput, options?: Partial<BaseChatModelCallOptions>): Promise<AIMessageChunk> {
    const plan = new CallPlan(this.targets, this.options, options);
    const watched =
      this.targets.length > 1 || this.targets.some((t) => t.config?.retry) ? watchingTokens(options, plan.markVisible) : options;
    return plan.execute((target) => target.model.invoke(input, watched));
  }

  override async *_streamIterator(
    input: BaseLanguageModelInput,
    options?: Partial<BaseChatModelCallOptions>,
  ): AsyncGenerator<AIMessageChunk> {
    const plan = new CallPlan(this.targets, this.options, options);
    // Chunks are held back until the first visible one, so a call that fails before any output can move on
    // without the consumer having seen a thing; from the first visible chunk on, they stream as they come.
    const queue: AIMessageChunk[] = [];
    let held: AIMessageChunk[] = [];
    let wake: (() => void) | undefined;
    let finished = false;
    let failure: unknown;
    const done = plan
      .execute(async (target) => {
        let merged: AIMessageChunk | undefined;
        held = [];
        for await (const chunk of await target.model.stream(input, options)) {
          merged = merged ? merged.concat(chunk) : chunk;
          if (plan.outputShown) queue.push(chunk);
          else {
            held.push(chunk);
            if (!visible(chunk)) continue;
            plan.markVisible();
            queue.push(...held.splice(0));
          }
          wake?.();
        }
        return merged ?? new AIMessageChunk({ content: "" });
      })
      .then(
        (final) => {
          // The answering attempt's chunks that showed nothing (a role, the usage) still belong to the reply.
          queue.push(...held.splice(0));
          const stamp = modelCallStamp(final);
          if (stamp) {
            queue.push(
              new AIMessageChunk({
                content: "",
                ...(final.id ? { id: final.id } : {}),
                response_metadata: { [MODEL_CALL_STAMP_KEY]: stamp },
              }),
            );
          }
        },
        (error: unknown) => {
          failure = error;
        },
      )
      .finally(() => {
        finished = true;
        wake?.();
      });
    for (;;) {
      const next = queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (finished) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
    await done;
    if (failure !== undefined) throw failure;
  }

  // As in model-kit's wrapper: these two serve BaseChatModel's own entry points (generate, streamEvents).
  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const message = await this.invoke(messages, options);
    return { generations: [{ text: message.text, message }] };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    for await (const chunk of this._streamIterator(messages, options)) {
      const generation = new ChatGenerationChunk({ text: chunk.text, message: chunk });
      yield generation;
      await runManager?.handleLLMNewToken(chunk.text, undefined, undefined, undefined, undefined, { chunk: generation });
    }
  }
}

/**
 * Wraps `model` (the entry `config` built by its provider) so calls go through its retries, limits, pricing and
 * fallbacks. `fallbacks` are the models its `fallbacks:` name, as `kernel.createModel` built them: a wrapped one
 * brings its own targets (its fallbacks too), so the call tries each model once, depth first.
 */
export function withCallPlan(
  model: BaseChatModel,
  config: ModelConfig,
  fallbacks: ReadonlyArray<{ name: string; model: BaseChatModel }>,
  options: ResilientModelOptions,
): BaseChatModel {
  const targets: CallTarget[] = [{ name: config.name, model, base: model, config }];
  const seen = new Set([config.name]);
  for (const fallback of fallbacks) {
    const theirs: readonly CallTarget[] =
      fallback.model instanceof ResilientChatModel
        ? fallback.model.targets
        : [{ name: fallback.name, model: fallback.model, base: fallback.model, config: undefined }];
    for (const target of theirs) {
      if (seen.has(target.name)) continue;
      seen.add(target.name);
      targets.push(target);
    }
  }
  return new ResilientChatModel(targets, options);
}

/**
 * A MODEL_CALL_PLANNER for one kernel: every model it plans shares its limits (so runs and subagents of the process
 * count against the same windows); `store()` says where requests per minute are counted.
 */
export function createModelCallPlanner(store: () => ModelRateStore): ModelCallPlanner {
  const limiter = new ModelLimiter(store);
  return async (model, config, fallbacks, env) =>
    withCallPlan(model, config, fallbacks, { name: config.name, where: env.where, logger: env.logger, limiter });
}
