import { createHash } from "node:crypto";
import diagnosticsChannel from "node:diagnostics_channel";
import {
  getCurrentTraceId,
  type Logger,
  type ModelCallHandler,
  type ModelCallRequest,
  OUTGOING_TRACE_CHANNEL,
  type RunInfo,
  type RunOutcome,
  resolveTraceId,
  type ToolCallHandlerOf,
  type ToolCallRequestOf,
  TRACE_METADATA_KEY,
} from "@antler/kernel";
import { MIDDLEWARE_SPAN_CHANNEL, type MiddlewareSpan } from "@antler/kernel/pipeline";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { getConfig } from "@langchain/langgraph";
import {
  type Attributes,
  context as apiContext,
  type Context,
  isSpanContextValid,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type IdGenerator,
  ParentBasedSampler,
  RandomIdGenerator,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import { OTEL_ATTRIBUTES, type OtelConfig, PLUGIN_NAME } from "./config.js";

interface OpenRun {
  readonly info: RunInfo;
  readonly span: Span;
  /** The parent context with the run span set: model and tool spans start here. */
  readonly context: Context;
  readonly attributes: Attributes;
  error?: unknown;
}

const HEX_TRACE_ID = /^(?!0{32})[0-9a-f]{32}$/;

/**
 * Lets one root span take a given trace id: the run span of a trace Antler started gets the Antler trace id itself
 * (when it is 32 hex digits, as the ids Antler generates are), so one id finds the run in logs and in the backend.
 */
class HintedIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  next: string | undefined;
  generateTraceId(): string {
    const hinted = this.next;
    this.next = undefined;
    return hinted ?? this.random.generateTraceId();
  }
  generateSpanId(): string {
    return this.random.generateSpanId();
  }
}

const headerSetter: TextMapSetter<Headers> = {
  set: (carrier, key, value) => carrier.set(key, value),
};
const headerGetter: TextMapGetter<Headers> = {
  keys: (carrier) => [...carrier.keys()],
  get: (carrier, key) => carrier.get(key) ?? undefined,
};

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Turns Antler's runs, model calls, tool calls and (sampled) middleware hooks into OpenTelemetry spans, exported
 * over OTLP/HTTP. Nothing here is global: the tracer provider, context manager and propagator are this object's own.
 */
export class OtelTracing {
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly contexts = new AsyncLocalStorageContextManager();
  private readonly propagator = new W3CTraceContextPropagator();
  private readonly ids = new HintedIdGenerator();
  private readonly runs = new Map<string, OpenRun>();
  /** Spans this plugin started and has not ended: a context holding one of them is a live parent. */
  private readonly live = new WeakSet<Span>();
  private readonly runOfSpan = new WeakMap<Span, string>();
  private readonly onOutgoing = (message: unknown) => this.injectTraceparent(message as { headers: Headers });
  private readonly onMiddleware = (message: unknown) => this.middlewareSpan(message as MiddlewareSpan);

  constructor(
    private readonly config: OtelConfig,
    private readonly logger: Logger,
  ) {
    this.contexts.enable();
    const rootSampler = new TraceIdRatioBasedSampler(config.sample_ratio);
    const exporter = new OTLPTraceExporter({
      url: config.endpoint,
      headers: { ...config.headers },
      timeoutMillis: config.export_timeout_ms,
    });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": config.service_name }),
      // An incoming traceparent whose flags say "not sampled" gets the root decision, not AlwaysOff: any caller can
      // send one, and the operator's sample_ratio must not be switched off from outside. A sampled one is followed.
      sampler: new ParentBasedSampler({ root: rootSampler, remoteParentNotSampled: rootSampler }),
      idGenerator: this.ids,
      spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: config.export_delay_ms })],
    });
    this.tracer = this.provider.getTracer(PLUGIN_NAME);
    if (config.propagate) diagnosticsChannel.subscribe(OUTGOING_TRACE_CHANNEL, this.onOutgoing);
    if (config.middleware_span_ratio > 0) diagnosticsChannel.subscribe(MIDDLEWARE_SPAN_CHANNEL, this.onMiddleware);
  }

  // ------------------------------------------------------------------ runs

  runStarted(info: RunInfo): void {
    const parent = this.liveParent();
    const parentSpan = trace.getSpan(parent);
    const attributes = this.runAttributes(info);
    const parentRunId = parentSpan ? this.runOfSpan.get(parentSpan) : undefined;
    if (!parentSpan && HEX_TRACE_ID.test(info.traceId)) this.ids.next = info.traceId;
    const span = this.tracer.startSpan(
      "invoke_agent",
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          ...attributes,
          "gen_ai.operation.name": "invoke_agent",
          ...(info.threadId !== undefined ? { "gen_ai.conversation.id": info.threadId } : {}),
          ...(parentRunId !== undefined ? { [OTEL_ATTRIBUTES.parentRunId]: parentRunId } : {}),
        },
      },
      parent,
    );
    this.ids.next = undefined;
    this.track(span, info.runId);
    this.runs.set(info.runId, { info, span, context: trace.setSpan(parent, span), attributes });
  }

  runFailed(info: RunInfo, error: unknown): void {
    const run = this.runs.get(info.runId);
    if (run) run.error = error;
  }

  runEnded(info: RunInfo, outcome: RunOutcome): void {
    const run = this.runs.get(info.runId);
    if (!run) return;
    this.runs.delete(info.runId);
    run.span.setAttribute(OTEL_ATTRIBUTES.outcome, outcome);
    if (outcome === "error") {
      if (run.error instanceof Error) run.span.recordException(run.error);
      run.span.setStatus({ code: SpanStatusCode.ERROR, message: run.error === undefined ? "run failed" : errorMessage(run.error) });
    }
    this.end(run.span);
  }

  // ------------------------------------------------------------------ model and tool calls

  async wrapModelCall(request: ModelCallRequest, handler: ModelCallHandler): ReturnType<ModelCallHandler> {
    const run = this.runFor(request.runtime?.context as Record<string, unknown> | undefined);
    if (!run) return handler(request);
    const context = (request.runtime?.context ?? {}) as Record<string, unknown>;
    const model = typeof context.model_name === "string" ? context.model_name : "model";
    const span = this.tracer.startSpan(
      `chat ${model}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { ...this.spanAttributes(run), "gen_ai.operation.name": "chat", "gen_ai.request.model": model },
      },
      run.context,
    );
    this.track(span, run.info.runId);
    try {
      const result = await this.contexts.with(trace.setSpan(run.context, span), () => handler(request));
      if (AIMessage.isInstance(result)) {
        const usage = result.usage_metadata;
        if (usage) {
          span.setAttribute("gen_ai.usage.input_tokens", usage.input_tokens);
          span.setAttribute("gen_ai.usage.output_tokens", usage.output_tokens);
        }
        const responseModel = result.response_metadata?.model_name ?? result.response_metadata?.model;
        if (typeof responseModel === "string") span.setAttribute("gen_ai.response.model", responseModel);
        const toolCalls = result.tool_calls?.length ?? 0;
        if (toolCalls > 0) span.setAttribute("antler.model.tool_calls", toolCalls);
      }
      return result;
    } catch (error) {
      this.fail(span, error);
      throw error;
    } finally {
      this.end(span);
    }
  }

  async wrapToolCall(request: ToolCallRequestOf, handler: ToolCallHandlerOf): ReturnType<ToolCallHandlerOf> {
    const run = this.runFor(request.runtime?.context as Record<string, unknown> | undefined);
    if (!run) return handler(request);
    const name = request.toolCall.name;
    const span = this.tracer.startSpan(
      `execute_tool ${name}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          ...this.spanAttributes(run),
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": name,
          ...(request.toolCall.id ? { "gen_ai.tool.call.id": request.toolCall.id } : {}),
        },
      },
      run.context,
    );
    this.track(span, run.info.runId);
    try {
      // The tool runs in this span's context: a subagent started by `task` parents its run here, and an outgoing
      // request (MCP over HTTP, a web tool) carries this span as its traceparent.
      const result = await this.contexts.with(trace.setSpan(run.context, span), () => handler(request));
      if (ToolMessage.isInstance(result) && result.status === "error") {
        span.setStatus({ code: SpanStatusCode.ERROR, message: String(result.content).slice(0, 500) });
      }
      return result;
    } catch (error) {
      this.fail(span, error);
      throw error;
    } finally {
      this.end(span);
    }
  }

  // ------------------------------------------------------------------ middleware hooks

  /**
   * Times one call of another middleware's wrap hook (sampled by `middleware_span_ratio`). The span nests under
   * whatever span of this run is active (the model or tool call, or an outer middleware), as the onion does.
   */
  async hookSpan<T>(
    entry: { name: string; plugin: string },
    hook: "wrapModelCall" | "wrapToolCall",
    runtimeContext: Record<string, unknown> | undefined,
    call: () => Promise<T> | T,
  ): Promise<T> {
    if (Math.random() >= this.config.middleware_span_ratio) return call();
    const run = this.runFor(runtimeContext);
    if (!run) return call();
    const parent = this.parentWithin(run);
    const span = this.tracer.startSpan(
      `middleware ${entry.name}.${hook}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          ...this.spanAttributes(run),
          [OTEL_ATTRIBUTES.middleware]: entry.name,
          [OTEL_ATTRIBUTES.hook]: hook,
          [OTEL_ATTRIBUTES.plugin]: entry.plugin,
        },
      },
      parent,
    );
    this.track(span, run.info.runId);
    try {
      return await this.contexts.with(trace.setSpan(parent, span), call);
    } catch (error) {
      this.fail(span, error);
      throw error;
    } finally {
      this.end(span);
    }
  }

  /** Node-style hooks (beforeAgent, beforeModel, ...) as the kernel publishes them on `antler:middleware`, sampled. */
  private middlewareSpan(event: MiddlewareSpan): void {
    if (Math.random() >= this.config.middleware_span_ratio) return;
    const run = this.runFor(event.traceId ? { [TRACE_METADATA_KEY]: event.traceId } : undefined);
    if (!run) return;
    const parent = this.parentWithin(run);
    const end = Date.now();
    const span = this.tracer.startSpan(
      `middleware ${event.middleware}.${event.hook}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: end - event.durationMs,
        attributes: {
          ...this.spanAttributes(run),
          [OTEL_ATTRIBUTES.middleware]: event.middleware,
          [OTEL_ATTRIBUTES.hook]: event.hook,
          [OTEL_ATTRIBUTES.plugin]: event.plugin,
        },
      },
      parent,
    );
    if (!event.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: `${event.hook} of ${event.middleware} threw` });
    span.end(end);
  }

  // ------------------------------------------------------------------ propagation

  /** Stamps `traceparent` (and `tracestate`) of the active span on a request the kernel is about to send. */
  private injectTraceparent(message: { headers: Headers }): void {
    const active = this.contexts.active();
    const span = trace.getSpan(active);
    if (!span || !isSpanContextValid(span.spanContext())) return;
    this.propagator.inject(active, message.headers, headerSetter);
  }

  /** Runs `next` with an incoming request's `traceparent` as the parent of the runs it starts. */
  aroundRequest(request: Request, next: () => Promise<void>): Promise<void> {
    if (!this.config.accept_traceparent || !request.headers.has("traceparent")) return next();
    const extracted = this.propagator.extract(ROOT_CONTEXT, request.headers, headerGetter);
    const span = trace.getSpan(extracted);
    if (!span || !isSpanContextValid(span.spanContext())) return next();
    return this.contexts.with(extracted, next);
  }

  async shutdown(): Promise<void> {
    diagnosticsChannel.unsubscribe(OUTGOING_TRACE_CHANNEL, this.onOutgoing);
    diagnosticsChannel.unsubscribe(MIDDLEWARE_SPAN_CHANNEL, this.onMiddleware);
    // Runs still open at shutdown are ended as they stand, so what they did is not lost.
    for (const run of this.runs.values()) {
      run.span.setAttribute(OTEL_ATTRIBUTES.outcome, "unfinished");
      this.end(run.span);
    }
    this.runs.clear();
    try {
      await this.provider.shutdown();
    } catch (err) {
      this.logger.warn({ err }, "exporting the last spans failed");
    }
    this.contexts.disable();
  }

  /** Exports every finished span now (tests, and the bench, call this before reading the receiver). */
  forceFlush(): Promise<void> {
    return this.provider.forceFlush();
  }

  // ------------------------------------------------------------------ helpers

  /**
   * The parent for a new run: the active context when it holds a span that is still open (this plugin's, e.g. the
   * `task` tool call of a subagent), a remote one (an incoming traceparent), or a recording span of the host
   * application's own OpenTelemetry setup; otherwise a new trace. An ended span left in some long-lived async
   * context (a worker loop started inside a tool call) must not adopt every later run.
   */
  private liveParent(): Context {
    const local = this.contexts.active();
    const candidate = local === ROOT_CONTEXT ? apiContext.active() : local;
    const span = trace.getSpan(candidate);
    if (!span) return ROOT_CONTEXT;
    const sc = span.spanContext();
    if (!isSpanContextValid(sc)) return ROOT_CONTEXT;
    if (this.live.has(span) || sc.isRemote || (span.isRecording() && !this.runOfSpan.has(span))) return candidate;
    return ROOT_CONTEXT;
  }

  /** The active context when it holds an open span of `run` (a model or tool call), else the run's own. */
  private parentWithin(run: OpenRun): Context {
    const active = this.contexts.active();
    const span = trace.getSpan(active);
    return span && this.live.has(span) && this.runOfSpan.get(span) === run.info.runId ? active : run.context;
  }

  /**
   * The open run a middleware call belongs to: by the Antler run id LangGraph carries in the call's config
   * metadata (lead runs and subagents both set it), else the newest open run of the same trace and thread.
   */
  private runFor(runtimeContext: Record<string, unknown> | undefined): OpenRun | undefined {
    let runId: unknown;
    try {
      runId = getConfig()?.metadata?.run_id;
    } catch {
      runId = undefined;
    }
    if (typeof runId === "string") {
      const run = this.runs.get(runId);
      if (run) return run;
    }
    const traceId = resolveTraceId(runtimeContext?.[TRACE_METADATA_KEY]);
    const threadId = runtimeContext?.thread_id;
    let found: OpenRun | undefined;
    for (const run of this.runs.values()) {
      if (run.info.traceId !== traceId) continue;
      if (threadId !== undefined && run.info.threadId !== threadId) continue;
      found = run;
    }
    return found;
  }

  private runAttributes(info: RunInfo): Attributes {
    const attributes: Attributes = { [OTEL_ATTRIBUTES.traceId]: info.traceId, [OTEL_ATTRIBUTES.runId]: info.runId };
    if (info.threadId !== undefined) attributes[OTEL_ATTRIBUTES.threadId] = info.threadId;
    if (info.userId !== undefined && this.config.user === "hashed") attributes[OTEL_ATTRIBUTES.user] = this.hashUser(info.userId);
    return attributes;
  }

  /** The run's attributes, with the ambient Antler trace id (the same id; read again in case a scope differs). */
  private spanAttributes(run: OpenRun): Attributes {
    return { ...run.attributes, [OTEL_ATTRIBUTES.traceId]: resolveTraceId(getCurrentTraceId(), run.info.traceId) };
  }

  private hashUser(userId: string): string {
    return createHash("sha256").update(`${this.config.user_hash_salt}\u0000${userId}`).digest("hex").slice(0, 32);
  }

  private track(span: Span, runId: string): void {
    this.live.add(span);
    this.runOfSpan.set(span, runId);
  }

  private end(span: Span): void {
    this.live.delete(span);
    span.end();
  }

  private fail(span: Span, error: unknown): void {
    if (error instanceof Error) span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
  }
}
