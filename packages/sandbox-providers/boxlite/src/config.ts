import { remoteSandboxPoolAndSyncFields } from "@antler/sandbox-e2b";
import { z } from "zod";

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
  ...remoteSandboxPoolAndSyncFields,
});

export type BoxLiteConfig = z.output<typeof boxliteConfigSchema>;
export type BoxLiteConfigInput = z.input<typeof boxliteConfigSchema>;

export const BOXLITE_API_KEY_ENV = "BOXLITE_API_KEY";
