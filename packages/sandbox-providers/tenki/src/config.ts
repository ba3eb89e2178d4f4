import { z } from "zod";

const MiB = 1024 * 1024;

/** `plugins[i].config` of `@antler/sandbox-tenki`. */
export const tenkiConfigSchema = z.strictObject({
  api_url: z
    .url({ protocol: /^https?$/ })
    .default("https://api.tenki.cloud")
    .describe("Tenki API endpoint (control plane)"),
  api_key: z
    .string()
    .min(1)
    .optional()
    .describe("API key (tk_...). Default: TENKI_AUTH_TOKEN, then TENKI_API_KEY, read when a sandbox is first acquired."),
  project_id: z.string().min(1).optional().describe("Project new sessions belong to; the key's default when unset"),
  workspace_id: z.string().min(1).optional(),
  cpu_cores: z.number().int().min(1).max(64).optional(),
  memory_mb: z.number().int().min(256).optional(),
  timeout_seconds: z.number().int().positive().default(1800).describe("maxDuration of a session; Tenki ends it after this"),
  request_timeout_ms: z.number().int().positive().default(30_000).describe("Per API call; a command gets its own timeout plus 30 s"),
  ready_timeout_ms: z.number().int().positive().default(180_000).describe("How long a new or resumed session may take to be RUNNING"),
  max_retries: z
    .number()
    .int()
    .min(0)
    .max(10)
    .default(3)
    .describe("Retries of rate-limited calls, and of idempotent calls that failed transiently"),
  scratch_dir: z
    .string()
    .regex(/^\/[^\0]*[^/]$/, "an absolute path")
    .default("/tmp")
    .describe("Where a command's stdout and stderr are captured for reading back (removed afterwards)"),
  pool_size: z
    .number()
    .int()
    .nonnegative()
    .default(4)
    .describe("Released sessions kept (per thread) for the thread's next run; 0 terminates on release."),
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

export type TenkiConfig = z.output<typeof tenkiConfigSchema>;
export type TenkiConfigInput = z.input<typeof tenkiConfigSchema>;

/** Looked up in this order, as Tenki's SDKs do. */
export const TENKI_KEY_ENVS = ["TENKI_AUTH_TOKEN", "TENKI_API_KEY"] as const;
