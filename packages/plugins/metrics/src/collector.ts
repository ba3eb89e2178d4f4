import diagnosticsChannel from "node:diagnostics_channel";
import {
  type ModelCallHandler,
  type ModelCallRequest,
  modelCallStamp,
  type RunInfo,
  type RunOutcome,
  type ToolCallHandlerOf,
  type ToolCallRequestOf,
} from "@antler/kernel";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { type MetricsConfig, OBSERVED_CHANNELS, OTHER_TOOL_LABEL, TOOL_LABEL_MAX_CHARS } from "./config.js";

interface SseEvent {
  type: "open" | "close";
}
interface BatchQueueEvent {
  claimed: number;
  taken_over: number;
  queue_depth?: number;
}
/** What the runtime publishes on `antler:runs:queue` (its `RunQueueEvent`). */
type RunQueueEvent =
  | { type: "started"; via: "new" | "queue" | "takeover"; wait_ms: number }
  | { type: "taken_over"; run_id: string; attempt: number };
interface SchedulerFiringEvent {
  trigger: string;
  result: string;
}

function seconds(startedMs: number): number {
  return (performance.now() - startedMs) / 1000;
}

/**
 * The Prometheus metrics of one kernel, in a registry of its own (never prom-client's global one): fed by kernel
 * hooks, the plugin's outermost middleware, and the diagnostics channels the gateway, batch and scheduler publish on.
 */
export class MetricsCollector {
  readonly registry = new Registry();
  private readonly runs: Counter<"outcome">;
  private readonly runSeconds: Histogram<"outcome">;
  private readonly modelSeconds: Histogram<"model" | "outcome">;
  private readonly tokens: Counter<"model" | "direction">;
  private readonly cost: Counter<"model">;
  private readonly toolCalls: Counter<"tool" | "outcome">;
  private readonly sseStreams: Gauge;
  private readonly batchDepth: Gauge;
  /** Runs paused for an approval on the database, counted at each scrape. */
  readonly pausedRuns: Gauge;
  /** Runs waiting in the queue (pending) on the database, counted at each scrape. */
  readonly pendingRuns: Gauge;
  readonly oldestPendingSeconds: Gauge;
  private readonly queueWait: Histogram<"via">;
  private readonly runTakeovers: Counter;
  private readonly batchClaimed: Counter;
  private readonly batchTakeovers: Counter;
  private readonly schedulerFirings: Counter<"trigger" | "result">;
  private readonly started = new Map<string, number>();
  private readonly listeners: Array<[string, (message: unknown) => void]>;

  constructor(config: MetricsConfig) {
    const p = config.prefix;
    const registers = [this.registry];
    this.runs = new Counter({
      name: `${p}runs_total`,
      help: "Runs that ended, by outcome (success, error, cancelled, paused: stopped for an approval; its resumed part ends again).",
      labelNames: ["outcome"],
      registers,
    });
    this.runSeconds = new Histogram({
      name: `${p}run_duration_seconds`,
      help: "Wall time of a run from start to end, by outcome.",
      labelNames: ["outcome"],
      buckets: config.run_seconds_buckets,
      registers,
    });
    this.modelSeconds = new Histogram({
      name: `${p}model_call_duration_seconds`,
      help: "Wall time of one model call, by configured model and outcome (error: the call threw).",
      labelNames: ["model", "outcome"],
      buckets: config.model_call_seconds_buckets,
      registers,
    });
    this.tokens = new Counter({
      name: `${p}tokens_total`,
      help: "Tokens reported by model calls, by configured model and direction (input, output).",
      labelNames: ["model", "direction"],
      registers,
    });
    this.cost = new Counter({
      name: `${p}cost_total`,
      help: "USD spent on model calls, by the configured model that answered (models with pricing:), subagents included.",
      labelNames: ["model"],
      registers,
    });
    this.toolCalls = new Counter({
      name: `${p}tool_calls_total`,
      help: "Tool calls, by tool and outcome (success; refused: a policy or middleware declined to run it; error: the tool failed or threw).",
      labelNames: ["tool", "outcome"],
      registers,
    });
    this.sseStreams = new Gauge({ name: `${p}sse_streams_active`, help: "Run event streams (SSE) the gateway is serving now.", registers });
    this.batchDepth = new Gauge({
      name: `${p}batch_queue_depth`,
      help: "Batch items waiting to be claimed, as last counted by a worker in this process.",
      registers,
    });
    this.pausedRuns = new Gauge({
      name: `${p}runs_paused`,
      help: "Runs paused for a person's decision (an approval), on the gateway's database, counted at the scrape.",
      registers,
    });
    this.pendingRuns = new Gauge({
      name: `${p}runs_pending`,
      help: "Runs accepted and waiting to execute (queued behind their thread's other runs), on the gateway's database, counted at the scrape.",
      registers,
    });
    this.oldestPendingSeconds = new Gauge({
      name: `${p}runs_oldest_pending_seconds`,
      help: "How long the oldest run waiting to execute has waited (0 when none waits), on the gateway's database, at the scrape. Growing: nothing executes queued runs (no antler worker, or all at capacity).",
      registers,
    });
    this.queueWait = new Histogram({
      name: `${p}run_queue_wait_seconds`,
      help: "How long a run waited before this instance started executing it: since it was accepted (via new, or via queue when another instance queued it), or since its stopped instance's lease expired (via takeover).",
      labelNames: ["via"],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
      registers,
    });
    this.runTakeovers = new Counter({
      name: `${p}run_takeovers_total`,
      help: "Runs this instance took over after the instance running them stopped (their lease expired).",
      registers,
    });
    this.batchClaimed = new Counter({
      name: `${p}batch_items_claimed_total`,
      help: "Batch items claimed by workers in this process.",
      registers,
    });
    this.batchTakeovers = new Counter({
      name: `${p}batch_lease_takeovers_total`,
      help: "Batch items claimed after another worker's lease expired.",
      registers,
    });
    this.schedulerFirings = new Counter({
      name: `${p}scheduler_firings_total`,
      help: "Scheduled occurrences handled by this instance, by trigger (schedule, manual) and result (fired, skipped, taken_over).",
      labelNames: ["trigger", "result"],
      registers,
    });
    if (config.process_metrics) collectDefaultMetrics({ register: this.registry, prefix: p });
    // Every outcome exists from the start, so a rate over a fresh process is 0 rather than absent.
    for (const outcome of ["success", "error", "cancelled"]) this.runs.inc({ outcome }, 0);
    this.listeners = [
      [OBSERVED_CHANNELS.sse, (m) => ((m as SseEvent).type === "open" ? this.sseStreams.inc() : this.sseStreams.dec())],
      [OBSERVED_CHANNELS.batchQueue, (m) => this.batchObserved(m as BatchQueueEvent)],
      [OBSERVED_CHANNELS.runQueue, (m) => this.runQueueObserved(m as RunQueueEvent)],
      [
        OBSERVED_CHANNELS.schedulerFiring,
        (m) => this.schedulerFirings.inc({ trigger: (m as SchedulerFiringEvent).trigger, result: (m as SchedulerFiringEvent).result }),
      ],
    ];
    for (const [name, fn] of this.listeners) diagnosticsChannel.subscribe(name, fn);
  }

  close(): void {
    for (const [name, fn] of this.listeners) diagnosticsChannel.unsubscribe(name, fn);
    this.started.clear();
  }

  runStarted(run: RunInfo): void {
    this.started.set(run.runId, performance.now());
  }

  runEnded(run: RunInfo, outcome: RunOutcome): void {
    const started = this.started.get(run.runId);
    this.started.delete(run.runId);
    this.runs.inc({ outcome });
    if (started !== undefined) this.runSeconds.observe({ outcome }, seconds(started));
  }

  async wrapModelCall(request: ModelCallRequest, handler: ModelCallHandler): ReturnType<ModelCallHandler> {
    const context = (request.runtime?.context ?? {}) as Record<string, unknown>;
    const model = typeof context.model_name === "string" ? context.model_name : "unknown";
    const started = performance.now();
    try {
      const result = await handler(request);
      this.modelSeconds.observe({ model, outcome: "success" }, seconds(started));
      const usage = AIMessage.isInstance(result) ? result.usage_metadata : undefined;
      if (usage) {
        this.tokens.inc({ model, direction: "input" }, usage.input_tokens);
        this.tokens.inc({ model, direction: "output" }, usage.output_tokens);
      }
      const stamp = AIMessage.isInstance(result) ? modelCallStamp(result) : undefined;
      if (stamp?.cost_usd != null) this.cost.inc({ model: stamp.model }, stamp.cost_usd);
      return result;
    } catch (error) {
      this.modelSeconds.observe({ model, outcome: "error" }, seconds(started));
      throw error;
    }
  }

  async wrapToolCall(request: ToolCallRequestOf, handler: ToolCallHandlerOf): ReturnType<ToolCallHandlerOf> {
    const tool = toolLabel(request);
    try {
      const result = await handler(request);
      this.toolCalls.inc({ tool, outcome: toolOutcome(result) });
      return result;
    } catch (error) {
      this.toolCalls.inc({ tool, outcome: "error" });
      throw error;
    }
  }

  private runQueueObserved(event: RunQueueEvent): void {
    if (event.type === "taken_over") this.runTakeovers.inc();
    else this.queueWait.observe({ via: event.via }, event.wait_ms / 1000);
  }

  private batchObserved(event: BatchQueueEvent): void {
    if (event.claimed > 0) this.batchClaimed.inc(event.claimed);
    if (event.taken_over > 0) this.batchTakeovers.inc(event.taken_over);
    if (event.queue_depth !== undefined) this.batchDepth.set(event.queue_depth);
  }
}

/**
 * The series a call is counted under. LangChain hands a middleware the tool it resolved by name, or `undefined` when the
 * agent has none by that name: only resolved names become series, so the model cannot add one per made-up name.
 */
function toolLabel(request: ToolCallRequestOf): string {
  const name = request.toolCall.name;
  const tool = request.tool as { name?: unknown } | undefined;
  if (tool === undefined || tool.name !== name) return OTHER_TOOL_LABEL;
  return name.length > TOOL_LABEL_MAX_CHARS ? name.slice(0, TOOL_LABEL_MAX_CHARS) : name;
}

/** A refusal (`refuseToolCall`, a guardrail denial) is not a failure of the tool. */
function toolOutcome(result: unknown): "success" | "refused" | "error" {
  if (!ToolMessage.isInstance(result) || result.status !== "error") return "success";
  const meta = result.additional_kwargs?.antler_tool_meta as { error_type?: unknown } | undefined;
  return meta?.error_type === "refused" ? "refused" : "error";
}
