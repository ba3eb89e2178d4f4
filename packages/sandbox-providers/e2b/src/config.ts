import { z } from "zod";

const MiB = 1024 * 1024;

/**
 * The warm pool and output-sync settings every remote sandbox provider built on this package's lifecycle shares
 * (E2B, BoxLite, Tenki): spread them into a provider's config schema.
 */
export const remoteSandboxPoolAndSyncFields = {
  pool_size: z
    .number()
    .int()
    .nonnegative()
    .default(4)
    .describe("Released sandboxes kept running (per thread) for the thread's next run; 0 removes them on release."),
  max_file_bytes: z
    .number()
    .int()
    .positive()
    .default(100 * MiB)
    .describe("Output sync: files larger than this are never downloaded."),
  max_total_bytes: z
    .number()
    .int()
    .positive()
    .default(512 * MiB)
    .describe("Output sync: bytes downloaded per release."),
  max_files: z.number().int().positive().default(2000).describe("Output sync: files downloaded per release."),
  deadline_ms: z.number().int().positive().default(120_000).describe("Output sync: wall-clock budget per release."),
};

/** `plugins[i].config` of `@antler/sandbox-e2b`. */
export const e2bConfigSchema = z.strictObject({
  api_key: z
    .string()
    .min(1)
    .optional()
    .describe("E2B API key. Default: the E2B_API_KEY environment variable, read when a sandbox is first acquired."),
  api_url: z.string().url().optional().describe("Control-plane API base URL. Default https://api.<domain>."),
  sandbox_url: z.string().url().optional().describe("In-sandbox API (envd) base URL; only for self-hosted or local E2B."),
  domain: z.string().min(1).optional().describe("E2B domain. Default e2b.app."),
  template: z.string().min(1).optional().describe("Template name or id. Default: the SDK's `base` template."),
  timeout_seconds: z
    .number()
    .int()
    .positive()
    .default(1800)
    .describe("Lifetime of a remote sandbox; E2B kills it after this, parked or not."),
  request_timeout_ms: z.number().int().positive().default(60_000).describe("Per HTTP request to E2B."),
  ...remoteSandboxPoolAndSyncFields,
});

export type E2BConfig = z.output<typeof e2bConfigSchema>;
export type E2BConfigInput = z.input<typeof e2bConfigSchema>;

export const E2B_API_KEY_ENV = "E2B_API_KEY";
