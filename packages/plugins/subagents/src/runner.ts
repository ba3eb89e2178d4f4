import { randomUUID } from "node:crypto";
import { posix } from "node:path";
import {
  type AntlerTool,
  ensureTraceContext,
  type Kernel,
  type Logger,
  type MiddlewareEntry,
  modelCallStamp,
  TRACE_METADATA_KEY,
} from "@antler/kernel";
import { withRunContext } from "@antler/kernel/authoring";
import { admitRun, checkpointThreadId, compileThreadPipeline, messageText, runtimeConfig } from "@antler/plugin-runtime";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { createAgent, type ReactAgent } from "langchain";
import { resultBrief } from "./brief.js";
import { checkCitations } from "./citations.js";
import type {
  AcceptanceReport,
  SubagentOutcome,
  SubagentRequest,
  SubagentRunner,
  SubagentStatus,
  SubagentStopReason,
  SubagentUsage,
} from "./contract.js";
import { criteriaBlock, evaluateAcceptance, type FileProbe, normalizeCriteria } from "./criteria.js";
import { ReceiptRecorder, receiptsMiddleware, sha256 } from "./receipts.js";
import { turnCapMiddleware } from "./turn-cap.js";
import type { SubagentType, SubagentTypeRegistry } from "./types.js";

const PLUGIN = "@antler/plugin-subagents";
/** Run-context key naming the execution, so the shared (cached) receipts middleware finds this run's recorder. */
export const EXECUTION_CONTEXT_KEY = "subagent_execution_id";
/** Custom events of one subagent run passed to `onEvent`; later ones are dropped. */
export const MAX_FORWARDED_EVENTS = 1000;

export interface KernelSubagentRunnerOptions {
  kernel: Kernel;
  types: SubagentTypeRegistry;
  receiptsEnabled: boolean;
  /** How long a subagent may take to stop after a timeout or cancel before `run` returns without it. */
  cancelGraceMs: number;
  logger: Logger;
}

type Stop = { kind: "timeout" } | { kind: "cancelled"; reason: unknown };

const EMPTY_USAGE: SubagentUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

function usageOf(messages: readonly BaseMessage[]): SubagentUsage {
  let inputTokens = 0;
  let outputTokens = 0;
  let totalTokens = 0;
  let costByModel: Record<string, number> | undefined;
  for (const m of messages) {
    const stamp = AIMessage.isInstance(m) ? modelCallStamp(m) : undefined;
    if (stamp?.cost_usd != null) {
      costByModel ??= {};
      costByModel[stamp.model] = (costByModel[stamp.model] ?? 0) + stamp.cost_usd;
    }
    if (!AIMessage.isInstance(m) || !m.usage_metadata) continue;
    inputTokens += m.usage_metadata.input_tokens ?? 0;
    outputTokens += m.usage_metadata.output_tokens ?? 0;
    totalTokens += m.usage_metadata.total_tokens ?? (m.usage_metadata.input_tokens ?? 0) + (m.usage_metadata.output_tokens ?? 0);
  }
  return { inputTokens, outputTokens, totalTokens, ...(costByModel ? { costByModel } : {}) };
}

function lastAiText(messages: readonly BaseMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (AIMessage.isInstance(m)) {
      const text = messageText(m.content).trim();
      if (text !== "") return text;
    }
  }
  return "";
}

/**
 * Why a run that produced an answer stopped early: loop detection withdrew the tools (`loop_capped`), the turn cap
 * or the recursion limit hit (`turn_capped`), or the last answer was cut by the provider's token limit
 * (`token_capped`: OpenAI `finish_reason: "length"`, Anthropic `stop_reason: "max_tokens"`).
 */
export function stopReasonOf(
  messages: readonly BaseMessage[],
  stateStopReason: string | null | undefined,
  recursionCapped = false,
): SubagentStopReason | undefined {
  if (stateStopReason === "loop_capped") return "loop_capped";
  if (stateStopReason === "turn_capped" || recursionCapped) return "turn_capped";
  const last = [...messages].reverse().find((m) => AIMessage.isInstance(m));
  const meta = (last?.response_metadata ?? {}) as Record<string, unknown>;
  if (meta.finish_reason === "length" || meta.stop_reason === "max_tokens") return "token_capped";
  return undefined;
}

function modelFailed(messages: readonly BaseMessage[]): boolean {
  const last = messages.at(-1);
  return last !== undefined && AIMessage.isInstance(last) && last.additional_kwargs?.antler_error_fallback === true;
}

function errorText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split("\n")[0] ?? message;
}

/**
 * Runs subagents on the kernel: each in its own kernel run (run scope, run hooks, trace scope), with tools from the
 * kernel's assembly (`subagentEnabled: false`) filtered by its type, and the subagent middleware chain
 * (`assembleMiddleware({ subagent: true })`) plus receipts and a turn cap. Agents are cached per type, model and
 * tool set; receipts are per execution.
 */
export class KernelSubagentRunner implements SubagentRunner {
  private readonly recorders = new Map<string, ReceiptRecorder>();
  private readonly agents = new Map<string, Promise<ReactAgent>>();
  private readonly models = new Map<string, Promise<BaseChatModel>>();

  constructor(private readonly options: KernelSubagentRunnerOptions) {}

  types(): readonly string[] {
    return this.options.types.names();
  }

  async run(request: SubagentRequest): Promise<SubagentOutcome> {
    const started = performance.now();
    const taskId = request.taskId ?? randomUUID();
    // A boundary crossing (seed 004): the id the subagent's scope will bind, the caller's scope first, so the
    // outcome, the run record and the logs all carry the id that is actually ambient.
    const traceId = ensureTraceContext(request.traceId, (id) => id);
    const fail = (error: string): SubagentOutcome => ({
      status: "failed",
      error,
      result: "",
      resultSha256: sha256(""),
      receipts: [],
      durationMs: Math.round(performance.now() - started),
      taskId,
      traceId,
    });
    const type = this.options.types.get(request.subagentType);
    if (!type) {
      const available = this.types();
      return fail(
        `unknown subagent type "${request.subagentType}"; available types: ${available.length ? available.join(", ") : "(none)"}`,
      );
    }
    // Run outside the caller's LangChain context: LangGraph merges the ambient config (callbacks, tags, metadata)
    // into any graph started inside a tool, and a subagent is its own run, not a step of the parent's graph. The
    // trace id is carried over explicitly.
    const storage = AsyncLocalStorageProviderSingleton.getInstance() as { run<T>(store: unknown, fn: () => T): T };
    try {
      return await storage.run(undefined, () =>
        ensureTraceContext(traceId, () => this.execute(request, type, { taskId, traceId, started })),
      );
    } catch (err) {
      return fail(`subagent could not be started: ${errorText(err)}`);
    }
  }

  private modelFor(name: string): Promise<BaseChatModel> {
    let model = this.models.get(name);
    if (!model) {
      // As in DeerFlow, subagents run with thinking off: they do bounded delegated work, and the lead thinks.
      model = this.options.kernel.createModel(name, { thinking: false });
      model.catch(() => this.models.delete(name));
      this.models.set(name, model);
    }
    return model;
  }

  private async agentFor(type: SubagentType, modelName: string, context: Record<string, unknown>): Promise<ReactAgent> {
    const { kernel } = this.options;
    const denied = new Set(type.disallowedTools);
    const allowed = type.tools ? new Set(type.tools) : undefined;
    const keep = (t: AntlerTool) => !denied.has(t.name) && (!allowed || allowed.has(t.name));
    const tools = (await kernel.getAvailableTools({ modelName, context, subagentEnabled: false })).filter(keep);
    const key = JSON.stringify([type.name, modelName, tools.map((t) => t.name)]);
    let agent = this.agents.get(key);
    if (!agent) {
      agent = (async () => {
        const model = await this.modelFor(modelName);
        const chain = await kernel.assembleMiddleware({
          modelName,
          modelInfo: kernel.listModels().find((m) => m.name === modelName),
          model,
          subagent: true,
          context,
        });
        const own: MiddlewareEntry[] = [];
        // Recorded either way: acceptance criteria are judged on the record. receipts_enabled: false only drops
        // the labels (so nothing to cite), the citation rules and the receipts listed to the lead.
        const receipts = receiptsMiddleware(
          (ctx) => {
            const id = (ctx as Record<string, unknown> | undefined)?.[EXECUTION_CONTEXT_KEY];
            return typeof id === "string" ? this.recorders.get(id) : undefined;
          },
          { label: this.options.receiptsEnabled },
        );
        own.push({ name: `${PLUGIN}/${receipts.name}`, plugin: PLUGIN, placement: { stage: "first" }, spec: receipts });
        const cap = turnCapMiddleware(type.maxTurns);
        own.push({ name: `${PLUGIN}/${cap.name}`, plugin: PLUGIN, placement: { stage: "first" }, spec: cap });
        // Receipts outermost: each call's final outcome (refusals and handled errors included) is what gets recorded.
        const pipeline = compileThreadPipeline([...own, ...chain]);
        const names = new Set(tools.map((t) => t.name));
        return createAgent({
          model,
          tools: [...tools, ...pipeline.tools.filter((t) => !names.has(t.name) && keep(t))],
          middleware: pipeline.middleware,
          systemPrompt: type.systemPrompt,
          name: `subagent-${type.name}`,
        } as unknown as Parameters<typeof createAgent>[0]) as unknown as ReactAgent;
      })();
      agent.catch(() => this.agents.delete(key));
      this.agents.set(key, agent);
    }
    return agent;
  }

  private async execute(
    request: SubagentRequest,
    type: SubagentType,
    ids: { taskId: string; traceId: string; started: number },
  ): Promise<SubagentOutcome> {
    const { kernel, logger: baseLogger } = this.options;
    const { taskId, traceId, started } = ids;
    const executionId = randomUUID();
    const modelName = type.model === "inherit" ? kernel.modelConfig(request.modelName).name : kernel.modelConfig(type.model).name;
    const threadKey = `${checkpointThreadId(request.userId, request.threadId)}/subagents/${executionId}`;
    const logger = baseLogger.child({ trace_id: traceId, task_id: taskId, subagent_type: type.name, thread_id: request.threadId });
    const criteria = normalizeCriteria(request.acceptanceCriteria ?? []).criteria;
    // The checks every lead run passes (authorization: may this role use this model?), before anything starts. A
    // batch item's subagent or a type with a model of its own is judged here, not by the lead run's admission.
    await admitRun(kernel, {
      userId: request.userId,
      userRole: request.userRole,
      modelName,
      agentName: undefined,
      internal: false,
      traceId,
    });
    const context: Record<string, unknown> = {
      thread_id: request.threadId,
      user_id: request.userId,
      ...(request.userRole !== undefined ? { user_role: request.userRole } : {}),
      [TRACE_METADATA_KEY]: traceId,
      model_name: modelName,
      non_interactive: true,
      [EXECUTION_CONTEXT_KEY]: executionId,
    };
    const recorder = new ReceiptRecorder();
    this.recorders.set(executionId, recorder);

    const controller = new AbortController();
    let stop: Stop | undefined;
    const halt = (why: Stop) => {
      if (stop) return;
      stop = why;
      controller.abort(why.kind === "timeout" ? new Error(`subagent timed out`) : why.reason);
    };
    const onParentAbort = () => halt({ kind: "cancelled", reason: request.signal?.reason });
    const timeoutSeconds = request.timeoutSeconds ?? type.timeoutSeconds;
    let values: { messages?: BaseMessage[]; stop_reason?: string | null; sandbox?: { sandbox_id?: string } } = {};
    let seenAi = 0;
    let failure: unknown;
    let abandoned = false;
    let recursionCapped = false;
    let run: Awaited<ReturnType<Kernel["beginRun"]>>;
    try {
      run = await kernel.beginRun({ threadId: request.threadId, userId: request.userId, traceId, signal: controller.signal });
    } catch (err) {
      this.recorders.delete(executionId);
      throw err;
    }
    if (request.signal?.aborted) onParentAbort();
    else request.signal?.addEventListener("abort", onParentAbort, { once: true });
    const timer = setTimeout(() => halt({ kind: "timeout" }), Math.round(timeoutSeconds * 1000));
    logger.info(
      { run_id: run.context.runId, model: modelName, checkpoint_thread_id: threadKey, description: request.description },
      "subagent started",
    );
    // What the subagent's middleware and tools emit (a guardrail denial, a span, a workspace change) belongs to the
    // parent run's record too: it goes to the caller, capped so a chatty subagent cannot flood the parent's stream.
    let forwarded = 0;
    const forward = (data: unknown) => {
      if (!request.onEvent || data === null || typeof data !== "object" || typeof (data as { type?: unknown }).type !== "string") return;
      if (forwarded >= MAX_FORWARDED_EVENTS) return;
      forwarded += 1;
      try {
        request.onEvent(data as { type: string });
      } catch (err) {
        logger.warn({ err }, "subagent event listener threw");
      }
    };
    try {
      const prompt = criteria.length ? `${request.prompt}\n\n${criteriaBlock(criteria)}` : request.prompt;
      const consume = async () => {
        const agent = await this.agentFor(type, modelName, context);
        const stream = await agent.stream(
          { messages: [new HumanMessage(prompt)] } as never,
          {
            configurable: { thread_id: threadKey },
            context: withRunContext(context, run.context),
            streamMode: ["values", "custom"],
            recursionLimit: runtimeConfig(kernel.config).recursion_limit,
            signal: controller.signal,
            metadata: { antler_trace_id: traceId, run_id: run.context.runId, parent_thread_id: request.threadId, subagent_type: type.name },
          } as never,
        );
        for await (const [mode, data] of stream as unknown as AsyncIterable<[string, unknown]>) {
          if (mode === "custom") {
            forward(data);
            continue;
          }
          const chunk = data as typeof values;
          values = chunk;
          const messages = chunk.messages ?? [];
          const ai = messages.filter((m) => AIMessage.isInstance(m)) as AIMessage[];
          if (ai.length > seenAi && request.onProgress) {
            seenAi = ai.length;
            const newest = ai[ai.length - 1] as AIMessage;
            try {
              request.onProgress({
                taskId,
                messageIndex: seenAi,
                text: resultBrief(messageText(newest.content), 500),
                toolCalls: (newest.tool_calls ?? []).map((c) => c.name),
                usage: usageOf(messages),
                receipts: this.options.receiptsEnabled ? recorder.snapshot() : [],
              });
            } catch (err) {
              logger.warn({ err }, "subagent progress listener threw");
            }
          }
        }
      };
      // Safety net: once stopped, the subagent gets `cancelGraceMs` to wind down; a tool that ignores the abort
      // signal cannot hold the task (or the admission slot) past that.
      const finished = consume().then(
        () => "done" as const,
        (err: unknown) => {
          if ((err as { name?: string } | null)?.name === "GraphRecursionError") recursionCapped = true;
          else failure = err;
          return "done" as const;
        },
      );
      const graceExpired = new Promise<"abandoned">((resolve) => {
        const arm = () => setTimeout(() => resolve("abandoned"), this.options.cancelGraceMs).unref();
        if (controller.signal.aborted) arm();
        else controller.signal.addEventListener("abort", arm, { once: true });
      });
      abandoned = (await Promise.race([finished, graceExpired])) === "abandoned";
      if (abandoned)
        logger.warn({ grace_ms: this.options.cancelGraceMs }, "subagent did not stop in time after cancel; returning without it");
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onParentAbort);
    }

    const messages = values.messages ?? [];
    const result = lastAiText(messages);
    const receipts = recorder.snapshot();
    let status: SubagentStatus = "completed";
    let error: string | undefined;
    if (stop?.kind === "timeout") {
      status = "timed_out";
      error = `timed out after ${timeoutSeconds}s${abandoned ? " and did not stop within the grace period" : ""}`;
    } else if (stop?.kind === "cancelled") {
      status = "cancelled";
      error = "cancelled by the parent";
    } else if (failure !== undefined) {
      status = "failed";
      error = errorText(failure);
    } else if (modelFailed(messages)) {
      // LLMErrorHandling turned a provider failure into an apology message; for a delegate that is a failure.
      status = "failed";
      error = `model call failed: ${result}`;
    }
    const stopReason = stopReasonOf(messages, values.stop_reason, recursionCapped);

    let acceptance: AcceptanceReport | undefined;
    if (criteria.length > 0) {
      acceptance = await evaluateAcceptance(criteria, receipts, this.fileProbe(values.sandbox?.sandbox_id ?? request.sandboxId));
    }
    this.recorders.delete(executionId);
    await run.end(status === "completed" ? "success" : status === "failed" ? "error" : "cancelled", failure);
    const outcome: SubagentOutcome = {
      status,
      ...(stopReason ? { stopReason } : {}),
      ...(error !== undefined ? { error } : {}),
      result,
      resultSha256: sha256(result),
      model: modelName,
      usage: messages.length ? usageOf(messages) : EMPTY_USAGE,
      receipts: this.options.receiptsEnabled ? receipts : [],
      ...(acceptance ? { acceptance } : {}),
      // Without labels the subagent has nothing to cite, so there is no verdict to give.
      ...(this.options.receiptsEnabled ? { citations: checkCitations(result, receipts) } : {}),
      durationMs: Math.round(performance.now() - started),
      taskId,
      checkpointThreadId: threadKey,
      traceId,
    };
    logger.info(
      {
        status,
        stop_reason: stopReason,
        receipts: receipts.length,
        verdict: acceptance?.verdict,
        citations: outcome.citations?.verdict,
        duration_ms: outcome.durationMs,
      },
      "subagent ended",
    );
    return outcome;
  }

  /** Looks files up in the sandbox the subagent used (by the id its Sandbox middleware recorded in state). */
  private fileProbe(sandboxId: string | undefined): FileProbe {
    return async (path) => {
      if (!sandboxId) return null;
      let sandbox: ReturnType<ReturnType<Kernel["sandboxProvider"]>["get"]>;
      try {
        sandbox = this.options.kernel.sandboxProvider().get(sandboxId);
      } catch {
        return null;
      }
      if (!sandbox) return null;
      try {
        const entries = await sandbox.listDir(posix.dirname(path), 1);
        const entry = entries.find((e) => posix.resolve(e.path) === path);
        if (!entry || entry.type === "directory") return { exists: false, size: 0 };
        return { exists: true, size: entry.size };
      } catch (err) {
        if (/not found|no such|does not exist|ENOENT|ENOTDIR/i.test(errorText(err))) return { exists: false, size: 0 };
        throw err;
      }
    };
  }
}
