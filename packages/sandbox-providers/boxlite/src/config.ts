import { z } from "zod";

const MiB = 1024 * 1024;

/** `plugins[i].config` of `@antler/sandbox-boxlite`. */
export const boxliteConfigSchema = z.strictObject({
  api_url: z
    .url({ protocol: /^https?$/ })
    .default("https://api.boxlite.ai/v1")
    .describe("BoxLite REST base URL, up to and including /v1 (a `boxlite serve` host, or the hosted service)"),
  prefix: z
    .string()
    .regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]*$/, "letters, digits, '.', '_' and '-', starting with a letter or digit")
    .max(128)
    .default("default")
    .describe("Workspace (tenant) path segment: every box lives under /v1/<prefix>/boxes"),
  api_key: z
    .string()
    .min(1)
    .optional()
    .describe("Bearer token. Default: the BOXLITE_API_KEY environment variable, read when a sandbox is first acquired."),
  image: z.string().min(1).optional().describe("OCI image of new boxes. Default: the server's (alpine:latest)."),
  cpus: z.number().int().min(1).max(32).optional(),
  memory_mib: z.number().int().min(128).optional(),
  request_timeout_ms: z.number().int().positive().default(60_000).describe("Per HTTP request (not per command)."),
  max_retries: z
    .number()
    .int()
    .min(0)
    .max(10)
    .default(3)
    .describe("Retries of a request that failed with 429, 5xx, a timeout or a dropped connection"),
  pool_size: z
    .number()
    .int()
    .nonnegative()
    .default(4)
    .describe("Released boxes kept running (per thread) for the thread's next run; 0 removes on release."),
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
});

export type BoxLiteConfig = z.output<typeof boxliteConfigSchema>;
export type BoxLiteConfigInput = z.input<typeof boxliteConfigSchema>;

export const BOXLITE_API_KEY_ENV = "BOXLITE_API_KEY";
