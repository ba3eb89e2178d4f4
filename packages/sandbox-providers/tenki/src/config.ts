import { remoteSandboxPoolAndSyncFields } from "@antler/sandbox-e2b";
import { z } from "zod";

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
  ...remoteSandboxPoolAndSyncFields,
});

export type TenkiConfig = z.output<typeof tenkiConfigSchema>;
export type TenkiConfigInput = z.input<typeof tenkiConfigSchema>;

/** Looked up in this order, as Tenki's SDKs do. */
export const TENKI_KEY_ENVS = ["TENKI_AUTH_TOKEN", "TENKI_API_KEY"] as const;
