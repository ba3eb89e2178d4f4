import { TRACE_METADATA_KEY } from "@antler/kernel";
import { z } from "zod";

/**
 * Runtime context keys every run carries. Hooks and tools read them from `runtime.context`. The server sets
 * `run_id`, `thread_id`, `user_id`, the trace id and `non_interactive`; callers cannot (see `sanitizeRunContext`).
 */
export const runContextSchema = z.object({
  /** The kernel run this graph invocation belongs to (set by the runtime, with the run itself, by `withRunContext`). */
  run_id: z.string().optional(),
  thread_id: z.string().optional(),
  user_id: z.string().optional(),
  [TRACE_METADATA_KEY]: z.string().optional(),
  /** Scheduled and other unattended runs: no `ask_clarification`. */
  non_interactive: z.boolean().optional(),
  /** The configured model name this run uses. */
  model_name: z.string().optional(),
  /** A custom agent's name, for `update_agent`. */
  agent_name: z.string().optional(),
  /** Bootstrap runs create a new custom agent with `setup_agent`. */
  is_bootstrap: z.boolean().optional(),
  /** Plan mode switches on the Todo middleware's `write_todos`. */
  plan_mode: z.boolean().optional(),
  /** Set by a sandbox provider when it acquires one. */
  sandbox_id: z.string().optional(),
});

export type RunContextValues = z.output<typeof runContextSchema>;
