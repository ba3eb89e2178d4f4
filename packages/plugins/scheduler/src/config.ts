import { boundedCallerData } from "@antler/plugin-gateway/caller-data";
import { z } from "zod";

/** `plugins[i].config` of `@antler/plugin-scheduler`. */
export const schedulerConfigSchema = z.strictObject({
  run_in_gateway: z
    .boolean()
    .default(true)
    .describe("Poll for due tasks inside `antler serve` while the gateway serves (safe on any number of instances: claims are leased)."),
  poll_interval_seconds: z.number().positive().max(3600).default(5).describe("How often each instance looks for due tasks."),
  lease_seconds: z
    .number()
    .positive()
    .max(86_400)
    .default(60)
    .describe(
      "How long a claim lasts without renewal; a crashed instance's occurrence is taken over after this. Renewed every third of it.",
    ),
  max_concurrent_runs: z.number().int().positive().max(1000).default(3).describe("Occurrences one instance runs at a time."),
  max_attempts: z
    .number()
    .int()
    .positive()
    .max(20)
    .default(3)
    .describe("Tries per occurrence when instances crash mid-run (lease takeovers); then it is recorded as failed."),
  shutdown_grace_seconds: z
    .number()
    .min(0)
    .max(3600)
    .default(10)
    .describe("On kernel close, how long running occurrences may finish before they are interrupted (and taken over elsewhere)."),
  default_timezone: z.string().min(1).default("UTC").describe("Timezone of cron tasks and of `once` times written without an offset."),
  instance_id: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("Names this instance in leases and run records; default <hostname>:<pid>:<random>. Must differ between instances."),
  min_once_delay_seconds: z.number().min(0).default(0).describe("A `once` task must be at least this far in the future when added."),
});

export type SchedulerConfig = z.output<typeof schedulerConfigSchema>;
export type SchedulerConfigInput = z.input<typeof schedulerConfigSchema>;

/** What a user gives to add a task (CLI flags and HTTP bodies map onto this). Exactly one of `at` and `cron`. */
export const taskInputSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    prompt: z.string().trim().min(1, "prompt is empty").max(100_000),
    at: z.string().min(1).optional().describe("`once` time: ISO-8601; without an offset it is read in `timezone`."),
    cron: z.string().min(1).optional().describe('Five-field cron expression, e.g. "0 9 * * 1-5".'),
    timezone: z.string().min(1).optional().describe("IANA timezone; default `default_timezone`."),
    thread: z.enum(["new", "fixed"]).default("new").describe("new: a fresh thread per occurrence; fixed: one thread for all."),
    thread_id: z.string().min(1).max(128).optional().describe("The fixed thread (implies thread: fixed); default a new id."),
    model: z.string().min(1).optional(),
    agent: z.string().min(1).max(64).optional().describe("A custom agent of the task's owner (`antler agents list`) that runs it."),
    // Copied into every occurrence's run context, so it is held to the same limits as a run's context over HTTP.
    context: boundedCallerData("context").optional().describe("Extra runtime context; server-owned keys are refused."),
    paused: z.boolean().default(false),
    deliver_to: z
      .strictObject({
        channel: z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'a channel provider id, such as "telegram"'),
        chat: z.string().min(1).max(200),
        workspace: z
          .string()
          .min(1)
          .max(200)
          .optional()
          .describe("The chat's workspace (a Slack team id); needed only when the owner talks to the bot in that chat id in several."),
        thread: z.string().min(1).max(200).optional(),
      })
      .optional()
      .describe("Post each occurrence's answer to this chat (`@antler/plugin-channels`); the owner must talk to the bot there."),
  })
  .refine((t) => (t.at === undefined) !== (t.cron === undefined), {
    message: "give exactly one of `at` (a once task) and `cron` (a recurring task)",
    path: ["at"],
  });

export type TaskInput = z.input<typeof taskInputSchema>;
