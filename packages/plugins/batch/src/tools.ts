import { DEFAULT_USER_ID, isAntlerError, resolveTraceId, TRACE_METADATA_KEY } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { z } from "zod";
import type { BatchService } from "./service.js";
import type { BatchStatus } from "./store.js";
import { BATCH_STATUS_TOOL, BATCH_TASK_TOOL, batchTaskSchema, CANCEL_BATCH_TOOL } from "./validation.js";

export { BATCH_STATUS_TOOL, BATCH_TASK_TOOL, batchTaskSchema, CANCEL_BATCH_TOOL };

const statusSchema = z.object({ batch_id: z.string().describe("The id batch_task returned.") });

interface ToolCallContext {
  userId: string;
  threadId: string | undefined;
  traceId: string;
  /** The lead run's authorization role (server-stamped `user_role`); the batch's items act with it. */
  userRole: string | undefined;
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
    userRole: str("user_role"),
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
        const batch = await client.submit(args, { threadId: call.threadId, traceId: call.traceId, userRole: call.userRole });
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
