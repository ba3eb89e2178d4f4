import { createToken } from "@antler/kernel";

/**
 * The contract between `@antler/plugin-subagents` and the plugins that run subagents on its behalf
 * (`@antler/plugin-batch`). Both resolve these tokens from the kernel's root scope.
 */

/** How a subagent run ended. `timed_out` and `cancelled` are execution outcomes, never acceptance verdicts. */
export type SubagentStatus = "completed" | "failed" | "cancelled" | "timed_out";

/** Why a run that did produce an answer stopped early. */
export type SubagentStopReason = "turn_capped" | "token_capped" | "loop_capped";

/** One tool call a subagent made, as cited by `[rN tool_name]`. */
export interface ToolReceipt {
  /** `r1`, `r2`, ... in call order within one subagent run. */
  readonly id: string;
  readonly tool: string;
  readonly status: "success" | "error";
  readonly argsSha256: string;
  readonly outputSha256: string;
  readonly outputBytes: number;
  /** ISO-8601 start time and wall time in milliseconds. */
  readonly startedAt: string;
  readonly durationMs: number;
  /** bash only: the command, its exit code and the tail of its output, for `tests_passed:` checks. */
  readonly command?: string;
  readonly exitCode?: number;
  readonly outputTail?: string;
  /** write_file / str_replace only: the virtual path written. */
  readonly path?: string;
}

export type CriterionVerdict = "MET" | "UNMET" | "UNVERIFIED";

export interface CriterionResult {
  readonly criterion: string;
  readonly verdict: CriterionVerdict;
  /** Why, with the receipt ids that support it (`r3`). */
  readonly evidence: string;
}

export interface AcceptanceReport {
  /** `MET` only when every criterion is MET; `UNMET` when any is UNMET; otherwise `UNVERIFIED`. */
  readonly verdict: CriterionVerdict;
  readonly criteria: readonly CriterionResult[];
}

/** What is wrong with one `[rN tool]` citation: no receipt `rN`, `rN` is another tool's, or `rN` is a failed call. */
export type CitationProblem = "unknown_receipt" | "wrong_tool" | "failed_call";

export interface CitationCheck {
  /** The citation as written in the report, e.g. `[r3 bash]`. */
  readonly citation: string;
  readonly receipt: string;
  readonly problem?: CitationProblem;
  /** The cited receipt's tool, when the receipt exists. */
  readonly receipt_tool?: string;
}

/**
 * The runtime's cross-check of a report's citations against its receipts: execution evidence only (the cited
 * calls exist and are of the named tools), never proof that the claims made with them are true.
 */
export interface CitationReport {
  /** `NONE`: nothing cited; `INCONSISTENT`: a citation names a missing receipt or the wrong tool; else `CONSISTENT`. */
  readonly verdict: "NONE" | "CONSISTENT" | "INCONSISTENT";
  /** Distinct citations in the report. */
  readonly total: number;
  readonly invalid: number;
  /** Receipts the report never cites. */
  readonly uncited_receipts: number;
  /** The first 100 distinct citations, in report order. */
  readonly checks: readonly CitationCheck[];
}

export interface SubagentUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  /** USD of its model calls by the model that answered (models with `pricing:`); absent when none was priced. */
  readonly costByModel?: Readonly<Record<string, number>> | undefined;
}

export interface SubagentRequest {
  readonly prompt: string;
  readonly subagentType: string;
  /** A progress label only; execution never depends on it. */
  readonly description?: string | undefined;
  readonly acceptanceCriteria?: readonly string[] | undefined;
  readonly userId: string;
  /** The parent run's `user_role` (authorization); the subagent acts with the same role. */
  readonly userRole?: string | undefined;
  /** The parent thread; the subagent gets its own checkpoint thread derived from it. */
  readonly threadId: string;
  /** Cancels the subagent cooperatively (parent cancelled, batch cancelled, lease lost). */
  readonly signal?: AbortSignal | undefined;
  /** Defaults to the current trace id; the subagent's logs and events carry it. */
  readonly traceId?: string | undefined;
  /** Overrides the type's timeout. */
  readonly timeoutSeconds?: number | undefined;
  /** Caller's id for this task (the `task` tool passes its tool_call_id); events and logs carry it. Default: a fresh id. */
  readonly taskId?: string | undefined;
  /** The parent's `models:` name, used by types whose model is `inherit`. Default: `default_model`. */
  readonly modelName?: string | undefined;
  /**
   * The sandbox the parent thread already holds (its state's `sandbox.sandbox_id`). A subagent shares its parent's
   * sandbox; when the parent acquired it first, the subagent's own state never names it, and `file:` criteria are
   * checked in this one.
   */
  readonly sandboxId?: string | undefined;
  /** Called after each new AI message of the subagent, with the receipts so far. Must not throw. */
  readonly onProgress?: ((progress: SubagentProgress) => void) | undefined;
  /**
   * Called with each custom event the subagent's middleware and tools emit (`{ type, ... }`), at most 1,000 per
   * run. The `task` tool re-emits them on the parent's stream, so they are recorded on the parent run. Must not throw.
   */
  readonly onEvent?: ((event: { type: string; [key: string]: unknown }) => void) | undefined;
}

/** A subagent's progress, reported while it runs (the `task` tool turns it into `task_running` events). */
export interface SubagentProgress {
  readonly taskId: string;
  /** 1-based count of the subagent's AI messages so far. */
  readonly messageIndex: number;
  /** The newest AI message's text, cut to a brief. */
  readonly text: string;
  /** Tool names the newest AI message asked for. */
  readonly toolCalls: readonly string[];
  readonly usage: SubagentUsage;
  readonly receipts: readonly ToolReceipt[];
}

export interface SubagentOutcome {
  readonly status: SubagentStatus;
  readonly stopReason?: SubagentStopReason | undefined;
  readonly error?: string | undefined;
  /** The subagent's final answer, whole. Tools show a brief of it; stores may keep all of it. */
  readonly result: string;
  readonly resultSha256: string;
  readonly model?: string | undefined;
  readonly usage?: SubagentUsage | undefined;
  readonly receipts: readonly ToolReceipt[];
  /** Present when acceptance criteria were given and receipts are enabled. */
  readonly acceptance?: AcceptanceReport | undefined;
  /** The report's receipt citations checked against the receipts; present only when receipts are enabled. */
  readonly citations?: CitationReport | undefined;
  readonly durationMs: number;
  /** The task id (the request's, or the one generated for it). */
  readonly taskId?: string | undefined;
  /** The subagent's own checkpoint thread id, derived from the parent's. */
  readonly checkpointThreadId?: string | undefined;
  /** The trace id the subagent ran under. */
  readonly traceId?: string | undefined;
}

/**
 * Runs one subagent to its end. Never throws for an agent failure: that is an outcome with `status: "failed"`
 * (an unknown type too). `run` does not pass through the admission runtime: callers that want the process-wide
 * cap (`task`, batches) submit `(signal) => runner.run({ ...request, signal })` to `ADMISSION_RUNTIME` themselves.
 */
export interface SubagentRunner {
  /** The configured types, for error messages and tool descriptions. */
  types(): readonly string[];
  run(request: SubagentRequest): Promise<SubagentOutcome>;
}

export type AdmissionRejectReason = "queue_full" | "closed";

/**
 * The process-wide FIFO admission runtime shared by `task` and batches: at most `maxRunning` jobs at once,
 * at most `maxQueued` waiting, and new jobs rejected (an `AntlerError`) beyond that.
 */
export interface AdmissionRuntime {
  readonly maxRunning: number;
  readonly maxQueued: number;
  running(): number;
  queued(): number;
  /** Resolves with the job's result once it has run. A job aborted while queued never starts. */
  submit<T>(job: (signal: AbortSignal) => Promise<T>, options?: { signal?: AbortSignal; label?: string }): Promise<T>;
  /** Rejects queued jobs and aborts running ones. */
  close(): Promise<void>;
}

export const SUBAGENT_RUNNER = createToken<SubagentRunner>("antler.subagents.runner");
export const ADMISSION_RUNTIME = createToken<AdmissionRuntime>("antler.subagents.admission");

/** The lead's tool that delegates to a subagent. */
export const TASK_TOOL_NAME = "task";

/** The middleware that caps `task` calls per response and per run. */
export const SUBAGENT_LIMIT_MIDDLEWARE_NAME = "SubagentLimit";
