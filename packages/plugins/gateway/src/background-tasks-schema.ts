import { z } from "zod";

/** `GET /api/threads/{id}/background-tasks`: the thread's durable MCP tasks, bounded local fields only. */
export const backgroundTasksResponseSchema = z.object({
  thread_id: z.string(),
  tasks: z.array(
    z.object({
      task_id: z.string(),
      task_name: z.string(),
      server: z.string(),
      status: z.string(),
      cancel_requested: z.boolean(),
      result_summary: z.string().nullable(),
      error: z.string().nullable(),
      created_at: z.string(),
      updated_at: z.string(),
      finished_at: z.string().nullable(),
    }),
  ),
});
