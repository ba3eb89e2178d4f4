import { z } from "zod";

export const PLUGIN_NAME = "@antler/plugin-batch";
export const PLUGIN_VERSION = "0.1.0";

/** Limits of one submission. Keys are short handles for export; prompts are bounded so one row stays reasonable. */
export const BATCH_LIMITS = Object.freeze({
  keyMaxChars: 128,
  promptMaxChars: 100_000,
  titleMaxChars: 200,
  criteriaMaxItems: 20,
  criterionMaxChars: 500,
});

export const batchWorkerConfigSchema = z.strictObject({
  embedded: z
    .boolean()
    .default(true)
    .describe("Run a worker inside every kernel that loads the plugin (the lead's process). Set false for submit-only front ends."),
  concurrency: z
    .number()
    .int()
    .positive()
    .max(1024)
    .optional()
    .describe("Items in flight in this process. Default: the admission runtime's max_running (3), or 4 without one."),
  claim_batch: z
    .number()
    .int()
    .positive()
    .max(1000)
    .default(16)
    .describe("Most items claimed in one database round trip; up to two claim batches are leased ahead of execution."),
  poll_ms: z.number().int().positive().default(500).describe("How long an idle worker waits before looking for work again."),
});

export const batchPluginConfigSchema = z
  .strictObject({
    lease_seconds: z
      .number()
      .positive()
      .default(60)
      .describe("How long a claimed item stays owned without a heartbeat. A crashed worker's items run again after this."),
    heartbeat_seconds: z.number().positive().default(5).describe("How often a worker renews the leases of its items."),
    max_attempts: z
      .number()
      .int()
      .positive()
      .default(3)
      .describe("Leases an item may lose (worker crashes) before it is marked failed instead of claimed again."),
    max_items_per_batch: z.number().int().positive().max(1_000_000).default(10_000),
    worker: batchWorkerConfigSchema.default(batchWorkerConfigSchema.parse({})),
  })
  .refine((c) => c.heartbeat_seconds * 2 <= c.lease_seconds, {
    message: "heartbeat_seconds must be at most half of lease_seconds, or leases expire between heartbeats",
    path: ["heartbeat_seconds"],
  });

export type BatchPluginConfig = z.output<typeof batchPluginConfigSchema>;
export type BatchPluginConfigInput = z.input<typeof batchPluginConfigSchema>;
