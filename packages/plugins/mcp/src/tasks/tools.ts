import { DEFAULT_USER_ID, isAntlerError } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { z } from "zod";
import { McpTaskErrorCodes, mcpTaskError } from "./errors.js";
import { CANCEL_BACKGROUND_TASK_TOOL, LIST_BACKGROUND_TASKS_TOOL } from "./names.js";
import type { BackgroundTaskService } from "./service.js";
import type { BackgroundTaskView } from "./store.js";

export { CANCEL_BACKGROUND_TASK_TOOL, LIST_BACKGROUND_TASKS_TOOL };

function caller(runtime: ToolRuntime | undefined): { userId: string; threadId: string } {
  const raw = runtime?.context;
  const ctx = raw !== null && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  const str = (key: string) => (typeof ctx[key] === "string" && ctx[key] !== "" ? (ctx[key] as string) : undefined);
  const threadId = str("thread_id");
  if (!threadId) {
    throw mcpTaskError(McpTaskErrorCodes.NO_THREAD, "background tasks belong to a thread, and this call has none", {
      hint: "Call it inside a thread (every AntlerClient run has one).",
    });
  }
  return { userId: str("user_id") ?? DEFAULT_USER_ID, threadId };
}

function reply(runtime: ToolRuntime | undefined, name: string, content: string, status: "success" | "error" = "success"): ToolMessage {
  return new ToolMessage({ content, name, tool_call_id: runtime?.toolCallId ?? "", status });
}

function refusal(runtime: ToolRuntime | undefined, name: string, error: unknown): ToolMessage {
  const text = isAntlerError(error) ? `${error.message} [${error.code}]` : error instanceof Error ? error.message : String(error);
  return reply(runtime, name, `Error: ${text}`, "error");
}

/** The bounded fields the model sees for one task. */
export function taskForModel(task: BackgroundTaskView): Record<string, unknown> {
  return {
    task_id: task.task_id,
    task_name: task.task_name,
    status: task.status,
    cancel_requested: task.cancel_requested,
    created_at: task.created_at,
    updated_at: task.updated_at,
    ...(task.finished_at ? { finished_at: task.finished_at } : {}),
    ...(task.result_summary ? { result_summary: task.result_summary } : {}),
    ...(task.error ? { error: task.error } : {}),
  };
}

export function createBackgroundTaskTools(service: BackgroundTaskService) {
  const list = defineTool({
    name: LIST_BACKGROUND_TASKS_TOOL,
    description:
      "List this thread's background tasks (long-running MCP tools started earlier): id, tool, status (running, completed, failed, cancelled), whether cancellation was requested, and a short result once finished.",
    schema: z.object({
      active_only: z.boolean().optional().describe("Only tasks that are still running. Default false."),
    }),
    async run({ active_only }, runtime) {
      try {
        const { userId, threadId } = caller(runtime);
        const tasks = await service.list(userId, threadId, { activeOnly: active_only ?? false });
        const text = tasks.length === 0 ? "No background tasks on this thread." : `${tasks.length} background task(s) on this thread.`;
        return reply(runtime, LIST_BACKGROUND_TASKS_TOOL, `${text}\n${JSON.stringify({ tasks: tasks.map(taskForModel) })}`);
      } catch (error) {
        return refusal(runtime, LIST_BACKGROUND_TASKS_TOOL, error);
      }
    },
  });

  const cancel = defineTool({
    name: CANCEL_BACKGROUND_TASK_TOOL,
    description:
      "Ask to cancel a running background task. Returns at once: the request is recorded and the background service cancels the task on its server shortly after.",
    schema: z.object({
      task: z
        .string()
        .optional()
        .describe("The task id (bgt_…) from list_background_tasks; may be left out when exactly one task is running."),
    }),
    async run({ task }, runtime) {
      try {
        const { userId, threadId } = caller(runtime);
        const view = await service.requestCancel(userId, threadId, task);
        return reply(
          runtime,
          CANCEL_BACKGROUND_TASK_TOOL,
          `Cancellation of ${view.task_id} (${view.task_name}) requested; the background service cancels it on its server shortly.\n${JSON.stringify(taskForModel(view))}`,
        );
      } catch (error) {
        return refusal(runtime, CANCEL_BACKGROUND_TASK_TOOL, error);
      }
    },
  });

  return [list, cancel] as const;
}
