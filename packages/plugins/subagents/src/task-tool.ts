import { type AntlerTool, DEFAULT_USER_ID, emitCustomEvent, resolveTraceId, TRACE_METADATA_KEY } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { messageText } from "@antler/plugin-runtime";
import { ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { z } from "zod";
import { isAdmissionRejected } from "./admission.js";
import { RESULT_BRIEF_CHARS, resultBrief } from "./brief.js";
import { type AdmissionRuntime, type SubagentOutcome, type SubagentRunner, TASK_TOOL_NAME, type ToolReceipt } from "./contract.js";

export { TASK_TOOL_NAME };

import { formatCitations } from "./citations.js";
import { MAX_CRITERIA, MAX_CRITERION_CHARS, normalizeCriteria } from "./criteria.js";
import { formatReceipt, sha256 } from "./receipts.js";
import type { SubagentType } from "./types.js";

/** Receipts listed in the lead's view of a result; all of them are in `additional_kwargs`. */
const RECEIPTS_SHOWN = 40;

export const TASK_EVENT_TYPES = [
  "task_started",
  "task_running",
  "task_completed",
  "task_failed",
  "task_cancelled",
  "task_timed_out",
] as const;

export const taskSchema = z.object({
  description: z
    .string()
    .optional()
    .describe("A short progress label (3-7 words) shown to the user. Only a label: it never changes what the subagent does."),
  prompt: z
    .string()
    .min(1)
    .describe(
      "The complete task for the subagent: goal, inputs, constraints and what to report back. It sees nothing else of this conversation.",
    ),
  subagent_type: z.string().min(1).describe("Which subagent type runs the task (see the list in this tool's description)."),
  acceptance_criteria: z
    .array(z.string())
    .optional()
    .describe(
      `Objectively checkable outcomes, checked by the runtime after the subagent finishes (at most ${MAX_CRITERIA}, ${MAX_CRITERION_CHARS} characters each). Checkable forms: "file:<path> exists", "file:<path> non-empty", "file_written:<path>", "tests_passed:<command>"; anything else is reported UNVERIFIED.`,
    ),
});

export interface TaskToolDeps {
  runner: SubagentRunner;
  admission: AdmissionRuntime;
  types: readonly SubagentType[];
  receiptsEnabled: boolean;
}

export function taskToolDescription(types: readonly SubagentType[], receiptsEnabled: boolean): string {
  const list = types.map((t) => `- ${t.name}: ${t.description}`).join("\n");
  const receipts = receiptsEnabled
    ? "Each subagent tool call is recorded by the runtime as a receipt [rN tool_name] (status, hashes of arguments and output). Expect the subagent's report to cite receipts for every action it claims; a claim without a receipt is unverified. The runtime checks each citation against the receipts (Citations: CONSISTENT, INCONSISTENT or NONE): that is evidence the cited calls happened, not that the claims are true. "
    : "Receipts are disabled here (verification.receipts_enabled: false): reports carry no receipt citations and get no citation verdict, but acceptance criteria are still checked against the runtime's own record of the subagent's tool calls. ";
  return (
    "Delegate a self-contained task to a subagent that works with its own tools in the background and returns a report. " +
    "Use it for multi-step work that would clutter this conversation, and run independent tasks in parallel by calling task several times in one response. " +
    "The subagent's report is a self-report, not proof. " +
    receipts +
    "For outcomes that can be checked, pass acceptance_criteria (file:<path> exists | non-empty, file_written:<path>, tests_passed:<command>); " +
    "the verdict (MET, UNMET or UNVERIFIED per criterion) comes back with the result. Unmet criteria are never retried automatically: decide yourself.\n\n" +
    `Subagent types:\n${list}`
  );
}

function statusLine(outcome: SubagentOutcome): string {
  const brief = resultBrief(outcome.result);
  switch (outcome.status) {
    case "completed": {
      const capped = outcome.stopReason
        ? ` (capped: ${{ turn_capped: "turn limit", token_capped: "token budget", loop_capped: "repeated tool calls" }[outcome.stopReason]})`
        : "";
      return `Task Succeeded${capped}. Result: ${brief || "(the subagent gave no final text)"}`;
    }
    case "failed":
      return `Task failed. Error: ${outcome.error ?? "unknown error"}${brief ? `\nPartial result: ${brief}` : ""}`;
    case "timed_out":
      return `Task timed out. ${outcome.error ?? ""}${brief ? `\nPartial result: ${brief}` : ""}`.trimEnd();
    case "cancelled":
      return `Task cancelled by user.${brief ? `\nPartial result: ${brief}` : ""}`;
  }
}

/** The lead's view of a task's outcome: display text first, then the runtime's evidence. */
export function formatTaskResult(outcome: SubagentOutcome, extra: { dropped?: number } = {}): string {
  const parts = [statusLine(outcome)];
  if (outcome.receipts.length > 0) {
    const shown = outcome.receipts.slice(0, RECEIPTS_SHOWN).map(formatReceipt);
    const more = outcome.receipts.length - shown.length;
    parts.push(
      `Receipts recorded by the runtime (${outcome.receipts.length}):\n${shown.join("\n")}${more > 0 ? `\n... ${more} more in metadata` : ""}`,
    );
  }
  if (outcome.citations) parts.push(formatCitations(outcome.citations, outcome.receipts.length));
  if (outcome.acceptance) {
    const lines = outcome.acceptance.criteria.map((c) => `- ${c.verdict}: ${c.criterion} (${c.evidence})`);
    parts.push(`Acceptance: ${outcome.acceptance.verdict}\n${lines.join("\n")}`);
  }
  if (extra.dropped) parts.push(`Note: ${extra.dropped} acceptance criteria past the first ${MAX_CRITERIA} were ignored.`);
  return parts.join("\n\n");
}

function usageKwargs(outcome: SubagentOutcome) {
  const u = outcome.usage;
  return u ? { input_tokens: u.inputTokens, output_tokens: u.outputTokens, total_tokens: u.totalTokens } : undefined;
}

function costKwargs(byModel: Readonly<Record<string, number>>) {
  return { usd: Object.values(byModel).reduce((a, b) => a + b, 0), by_model: { ...byModel } };
}

function receiptJson(r: ToolReceipt) {
  return { ...r };
}

/** `additional_kwargs` of a task's ToolMessage: the structured facts behind the display text. */
export function taskResultKwargs(outcome: SubagentOutcome, subagentType: string): Record<string, unknown> {
  return {
    subagent_status: outcome.status,
    ...(outcome.stopReason ? { subagent_stop_reason: outcome.stopReason } : {}),
    ...(outcome.error !== undefined ? { subagent_error: outcome.error } : {}),
    subagent_result_brief: resultBrief(outcome.result, RESULT_BRIEF_CHARS),
    subagent_result_sha256: outcome.resultSha256,
    ...(outcome.model ? { subagent_model_name: outcome.model } : {}),
    ...(outcome.usage ? { subagent_token_usage: usageKwargs(outcome) } : {}),
    // What the lead run's cost adds for this task (its `end` event, the run record, budgets).
    ...(outcome.usage?.costByModel ? { subagent_cost: costKwargs(outcome.usage.costByModel) } : {}),
    subagent_receipts: outcome.receipts.map(receiptJson),
    ...(outcome.acceptance ? { subagent_acceptance_verdict: outcome.acceptance } : {}),
    ...(outcome.citations ? { subagent_citations: outcome.citations } : {}),
    subagent_type: subagentType,
    ...(outcome.taskId ? { subagent_task_id: outcome.taskId } : {}),
    ...(outcome.traceId ? { subagent_trace_id: outcome.traceId } : {}),
    subagent_duration_ms: outcome.durationMs,
  };
}

const TERMINAL_EVENT: Record<SubagentOutcome["status"], string> = {
  completed: "task_completed",
  failed: "task_failed",
  cancelled: "task_cancelled",
  timed_out: "task_timed_out",
};

function parentSandboxId(state: unknown): string | undefined {
  const sandbox = (state as { sandbox?: { sandbox_id?: unknown } } | null | undefined)?.sandbox;
  return typeof sandbox?.sandbox_id === "string" && sandbox.sandbox_id !== "" ? sandbox.sandbox_id : undefined;
}

function str(ctx: Record<string, unknown>, key: string): string | undefined {
  const v = ctx[key];
  return typeof v === "string" && v !== "" ? v : undefined;
}

/**
 * The `task` tool: validates the type, runs the subagent under the process-wide admission runtime, streams
 * `task_*` custom events to the parent's stream, and answers with a ToolMessage whose text states the outcome and
 * whose `additional_kwargs` carry the structured result (status, stop reason, brief, sha256, receipts, verdict).
 */
export function createTaskTool(deps: TaskToolDeps): AntlerTool {
  const names = deps.types.map((t) => t.name);
  return defineTool({
    name: TASK_TOOL_NAME,
    description: taskToolDescription(deps.types, deps.receiptsEnabled),
    schema: taskSchema,
    async run(args, runtime: ToolRuntime) {
      const toolCallId = runtime.toolCallId ?? "";
      const reply = (content: string, status: "success" | "error", kwargs: Record<string, unknown> = {}) =>
        new ToolMessage({ content, name: TASK_TOOL_NAME, tool_call_id: toolCallId, status, additional_kwargs: kwargs });
      if (!names.includes(args.subagent_type)) {
        return reply(
          `Error: unknown subagent_type "${args.subagent_type}". Available types: ${names.join(", ") || "(none)"}. Call task again with one of them.`,
          "error",
          { subagent_status: "failed", subagent_error: "unknown_subagent_type", subagent_available_types: names },
        );
      }
      const ctx = (runtime.context !== null && typeof runtime.context === "object" ? runtime.context : {}) as Record<string, unknown>;
      const threadId = str(ctx, "thread_id") ?? (runtime.configurable?.thread_id as string | undefined);
      if (!threadId) {
        return reply(
          "Error: this run has no thread_id, so a subagent has nowhere to work. This is a host configuration problem; tell the user.",
          "error",
        );
      }
      const userId = str(ctx, "user_id") ?? DEFAULT_USER_ID;
      const traceId = resolveTraceId(ctx[TRACE_METADATA_KEY]);
      const normalized = normalizeCriteria(args.acceptance_criteria ?? []);
      const label = args.description?.trim() || resultBrief(args.prompt.trim().replace(/\s+/g, " "), 80);
      const base = {
        task_id: toolCallId,
        description: label,
        subagent_type: args.subagent_type,
        trace_id: traceId,
      };
      const emit = (payload: Record<string, unknown>) => emitCustomEvent({ ...base, ...payload }, runtime).catch(() => {});
      await emit({ type: "task_started", prompt_sha256: sha256(args.prompt), acceptance_criteria: normalized.criteria });
      let outcome: SubagentOutcome;
      try {
        outcome = await deps.admission.submit(
          (signal) =>
            deps.runner.run({
              prompt: args.prompt,
              subagentType: args.subagent_type,
              description: label,
              acceptanceCriteria: normalized.criteria,
              userId,
              userRole: str(ctx, "user_role"),
              threadId,
              signal,
              traceId,
              taskId: toolCallId || undefined,
              modelName: str(ctx, "model_name"),
              sandboxId: parentSandboxId(runtime.state),
              // The subagent's own events, re-emitted as they were with the task they came from: the parent's
              // stream (and so its run's event log) shows what happened inside the subagent.
              onEvent: (event) =>
                void emitCustomEvent({ ...event, subagent: { task_id: toolCallId, subagent_type: args.subagent_type } }, runtime).catch(
                  () => {},
                ),
              onProgress: (p) =>
                void emit({
                  type: "task_running",
                  message_index: p.messageIndex,
                  message: p.text,
                  tool_calls: p.toolCalls,
                  usage: { input_tokens: p.usage.inputTokens, output_tokens: p.usage.outputTokens, total_tokens: p.usage.totalTokens },
                  receipts: p.receipts.length,
                }),
            }),
          { ...(runtime.signal ? { signal: runtime.signal } : {}), label: `task ${toolCallId || label}` },
        );
      } catch (err) {
        const rejected = isAdmissionRejected(err);
        const cancelled = rejected && err.reason === "aborted";
        const message = messageText((err as Error)?.message ?? String(err)).split("\n")[0] ?? "";
        outcome = {
          status: cancelled ? "cancelled" : "failed",
          error: rejected && !cancelled ? `not started: ${message}` : message,
          result: "",
          resultSha256: sha256(""),
          receipts: [],
          durationMs: 0,
          taskId: toolCallId,
        };
      }
      const kwargs = taskResultKwargs(outcome, args.subagent_type);
      await emit({
        type: TERMINAL_EVENT[outcome.status],
        status: outcome.status,
        ...(outcome.stopReason ? { stop_reason: outcome.stopReason } : {}),
        ...(outcome.error !== undefined ? { error: outcome.error } : {}),
        result_brief: kwargs.subagent_result_brief,
        result_sha256: outcome.resultSha256,
        receipts: kwargs.subagent_receipts,
        ...(outcome.acceptance ? { acceptance_verdict: outcome.acceptance.verdict, acceptance: outcome.acceptance } : {}),
        ...(outcome.citations ? { citations_verdict: outcome.citations.verdict, citations: outcome.citations } : {}),
        ...(outcome.usage ? { usage: kwargs.subagent_token_usage } : {}),
        duration_ms: outcome.durationMs,
      });
      return reply(
        formatTaskResult(outcome, { dropped: normalized.dropped }),
        outcome.status === "completed" ? "success" : "error",
        kwargs,
      );
    },
  });
}
