import { DEFAULT_USER_ID, type HookRuntime, type MiddlewareSpec, type StateUpdate } from "@antler/kernel";
import { z } from "zod";
import type { BackgroundTaskService } from "./service.js";

/** The thread-state projection of durable MCP tasks (DeerFlow's `background_tasks`). */
export const backgroundTasksStateSchema = z
  .array(z.object({ task_id: z.string(), task_name: z.string(), status: z.string(), updated_at: z.string() }))
  .optional();

export type BackgroundTasksState = NonNullable<z.output<typeof backgroundTasksStateSchema>>;

/**
 * Projects the thread's tasks into `background_tasks` before the agent runs (a task may have moved on in the
 * background since the last turn) and after it (a tool call may have started one). A thread that never had a
 * task gets no field at all.
 */
export function backgroundTasksMiddleware(service: () => BackgroundTaskService): MiddlewareSpec {
  const project = async (state: Record<string, unknown>, runtime: HookRuntime): Promise<StateUpdate | undefined> => {
    const ctx = (runtime.context ?? {}) as Record<string, unknown>;
    const threadId = typeof ctx.thread_id === "string" ? ctx.thread_id : undefined;
    if (!threadId) return undefined;
    const userId = typeof ctx.user_id === "string" && ctx.user_id ? ctx.user_id : DEFAULT_USER_ID;
    const tasks = await service().list(userId, threadId);
    const projection: BackgroundTasksState = tasks.map((t) => ({
      task_id: t.task_id,
      task_name: t.task_name,
      status: t.status,
      updated_at: t.updated_at,
    }));
    const current = state.background_tasks;
    if (projection.length === 0 && current === undefined) return undefined;
    if (JSON.stringify(current) === JSON.stringify(projection)) return undefined;
    return { background_tasks: projection };
  };
  return {
    name: "BackgroundTasks",
    state: { background_tasks: backgroundTasksStateSchema },
    beforeAgent: (state, runtime) => project(state, runtime),
    afterAgent: (state, runtime) => project(state, runtime),
  };
}
