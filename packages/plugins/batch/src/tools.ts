import { DEFAULT_USER_ID, isAntlerError, resolveTraceId, TRACE_METADATA_KEY } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { z } from "zod";
import { BATCH_LIMITS } from "./config.js";
import type { BatchService } from "./service.js";
import type { BatchStatus } from "./store.js";

export const BATCH_TASK_TOOL = "batch_task";
export const BATCH_STATUS_TOOL = "batch_status";
export const CANCEL_BATCH_TOOL = "cancel_batch";

// Limits are checked in code, not in the schema, so a refusal can name each offending item at once.
export const batchTaskSchema = z.object({
  title: z.string().describe("A short label for the batch, shown in status and progress output."),
  items: z
    .array(
      z.object({
        key: z.string().describe(`Your handle for the item, unique within the batch, 1–${BATCH_LIMITS.keyMaxChars} characters.`),
        prompt: z
          .string()
          .describe(`The complete task for one subagent, at most ${BATCH_LIMITS.promptMaxChars.toLocaleString("en-US")} characters.`),
        acceptance_criteria: z
          .array(z.string())
          .optional()
          .describe(
            `Up to ${BATCH_LIMITS.criteriaMaxItems} checks, each at most ${BATCH_LIMITS.criterionMaxChars} characters: file:<path> exists, file:<path> non-empty, file_written:<path>, tests_passed:<command>. Anything else is UNVERIFIED.`,
          ),
      }),
    )
    .describe("The items; each runs as its own subagent."),
  subagent_type: z.string().describe("The subagent type that runs every item (e.g. general-purpose)."),
  max_live_items: z
    .number()
    .int()
    .optional()
    .describe("Most items of this batch held by one worker process at once (queued for a slot or running)."),
  max_running_items: z.number().int().optional().describe("Most items of this batch running at once across all workers."),
});

const statusSchema = z.object({ batch_id: z.string().describe("The id batch_task returned.") });

interface ToolCallContext {
  userId: string;
  threadId: string | undefined;
  traceId: string;
}

function callContext(runtime: ToolRuntime | undefined): ToolCallContext {
  const raw = runtime?.context;
  const ctx = raw !== null && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  const str = (key: string) => (typeof ctx[key] === "string" && ctx[key] !== "" ? (ctx[key] as string) : undefined);
  return {
    userId: str("user_id") ?? DEFAULT_USER_ID,
    threadId: str("thread_id"),
    // The id stamped into the run's context travels as data; the ambient id is the fallback (seed 004).
    traceId: resolveTraceId(ctx[TRACE_METADATA_KEY]),
  };
}

function reply(runtime: ToolRuntime | undefined, name: string, content: string, status: "success" | "error" = "success"): ToolMessage {
  return new ToolMessage({ content, name, tool_call_id: runtime?.toolCallId ?? "", status });
}

function refusal(runtime: ToolRuntime | undefined, name: string, error: unknown): ToolMessage {
  const text = isAntlerError(error) ? error.message : error instanceof Error ? error.message : String(error);
  return reply(runtime, name, `Error: ${text}`, "error");
}

/** The status as the lead sees it: counts only, never results. */
export function formatStatusForModel(status: BatchStatus): string {
  const c = status.counts;
  const v = status.verdicts;
  return [
    `Batch ${status.id} "${status.title}" (${status.subagentType}): ${status.state}, ${status.done}/${status.totalItems} items finished.`,
    `Execution: pending ${c.pending}, running ${c.running}, completed ${c.completed}, failed ${c.failed}, timed_out ${c.timed_out}, cancelled ${c.cancelled}.`,
    `Acceptance (separate from execution): MET ${v.MET}, UNMET ${v.UNMET}, UNVERIFIED ${v.UNVERIFIED}, no verdict ${v.none}.`,
    JSON.stringify({
      batch_id: status.id,
      state: status.state,
      total: status.totalItems,
      done: status.done,
      counts: status.counts,
      acceptance_verdicts: status.verdicts,
    }),
  ].join("\n");
}

export function createBatchTools(service: BatchService) {
  const batchTask = defineTool({
    name: BATCH_TASK_TOOL,
    description: [
      "Run many independent subagent tasks as one durable batch (hundreds or thousands of items). Returns a batch id at once; the items run in the background, survive restarts and may be spread over several worker machines.",
      "Use it when the same kind of work applies to many inputs. For one or a few tasks whose answers you need now, use `task` instead.",
      "Results never come back into this conversation: check progress with batch_status, and tell the user to export results with `antler batch export <batch_id>` (JSONL).",
      "A batch's execution counts and its acceptance verdicts are separate: completed does not mean the criteria were met, and subagent reports are self-reports.",
    ].join("\n"),
    schema: batchTaskSchema,
    async run(args, runtime) {
      const call = callContext(runtime);
      try {
        const client = await service.client(call.userId, { startWorker: true });
        const batch = await client.submit(args, { threadId: call.threadId, traceId: call.traceId });
        return reply(
          runtime,
          BATCH_TASK_TOOL,
          `Batch submitted: ${batch.id} ("${batch.title}", ${batch.totalItems} items, subagent_type ${batch.subagentType}). ` +
            `It runs in the background. Follow it with batch_status("${batch.id}"); results are exported with \`antler batch export ${batch.id}\`.`,
        );
      } catch (error) {
        return refusal(runtime, BATCH_TASK_TOOL, error);
      }
    },
  });

  const batchStatus = defineTool({
    name: BATCH_STATUS_TOOL,
    description:
      "Counts of a batch's items by execution state (pending, running, completed, failed, timed_out, cancelled), and, separately, their acceptance verdicts (MET, UNMET, UNVERIFIED). Never returns results.",
    schema: statusSchema,
    async run({ batch_id }, runtime) {
      const call = callContext(runtime);
      try {
        const client = await service.client(call.userId, { startWorker: true });
        return reply(runtime, BATCH_STATUS_TOOL, formatStatusForModel(await client.status(batch_id)));
      } catch (error) {
        return refusal(runtime, BATCH_STATUS_TOOL, error);
      }
    },
  });

  const cancelBatch = defineTool({
    name: CANCEL_BATCH_TOOL,
    description: "Cancel a batch: its pending items never start and its running items are stopped. Finished items keep their results.",
    schema: statusSchema,
    async run({ batch_id }, runtime) {
      const call = callContext(runtime);
      try {
        const client = await service.client(call.userId, { startWorker: true });
        const { cancelledItems } = await client.cancel(batch_id);
        return reply(runtime, CANCEL_BATCH_TOOL, `Batch ${batch_id} cancelled: ${cancelledItems} pending or running item(s) stopped.`);
      } catch (error) {
        return refusal(runtime, CANCEL_BATCH_TOOL, error);
      }
    },
  });

  return [batchTask, batchStatus, cancelBatch] as const;
}
