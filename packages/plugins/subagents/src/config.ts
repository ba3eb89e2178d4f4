import { z } from "zod";

/**
 * `plugins[i].config` of `@antler/plugin-subagents`. The subagent types themselves (`custom_agents`), the default
 * timeout and the per-response / per-run `task` caps live in the top-level `subagents:` section of config.yaml,
 * which this plugin owns (`subagentsConfigSections`).
 */
export const subagentsPluginConfigSchema = z.strictObject({
  runtime: z
    .strictObject({
      max_running: z.number().int().positive().default(3).describe("Subagents running at once in this process (task and batches)."),
      max_queued: z.number().int().min(0).default(64).describe("Subagents waiting for a slot; past this, new ones are rejected."),
    })
    .default({ max_running: 3, max_queued: 64 }),
  verification: z
    .strictObject({
      receipts_enabled: z
        .boolean()
        .default(true)
        .describe(
          "Label each subagent tool result with a receipt [rN tool] the report cites, and list the receipts to the lead. Acceptance criteria are checked either way.",
        ),
    })
    .default({ receipts_enabled: true }),
  cancel_grace_seconds: z
    .number()
    .positive()
    .default(60)
    .describe("After a timeout or cancel, how long a subagent may take to stop before the task returns without it (safety net)."),
  agents: z
    .record(
      z.string(),
      z.strictObject({
        max_turns: z.number().int().positive().optional(),
        timeout_seconds: z.number().positive().optional(),
        model: z.string().min(1).optional(),
      }),
    )
    .default({})
    .describe("Overrides for built-in types (general-purpose, bash): max_turns, timeout_seconds, model."),
});

export type SubagentsPluginConfig = z.output<typeof subagentsPluginConfigSchema>;

export const customSubagentSchema = z.strictObject({
  description: z.string().min(1),
  system_prompt: z.string().min(1),
  tools: z.array(z.string()).optional(),
  disallowed_tools: z.array(z.string()).optional(),
  model: z.string().default("inherit"),
  max_turns: z.number().int().positive().optional(),
  timeout_seconds: z.number().positive().optional(),
});

export const subagentsSectionSchema = z.strictObject({
  enabled: z.boolean().default(false),
  timeout_seconds: z.number().positive().default(1800),
  max_concurrent: z.number().int().positive().default(3),
  max_total_per_run: z.number().int().positive().default(6),
  custom_agents: z.record(z.string(), customSubagentSchema).default({}),
});

/** The top-level sections of config.yaml this plugin owns; the kernel validates them while it is loaded. */
export const subagentsConfigSections = { subagents: subagentsSectionSchema.default(subagentsSectionSchema.parse({})) };

export type SubagentsSection = z.output<typeof subagentsSectionSchema>;
