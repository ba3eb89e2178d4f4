import { z } from "zod";

export const PLUGIN_NAME = "@antler/plugin-metrics";

/** The `tool` label of every call to a tool the agent was not built with (a name the model made up). */
export const OTHER_TOOL_LABEL = "other";
/**
 * Longest `tool` label kept (the providers' own limit on a function name); a longer registered name is cut here.
 * Every label value is a series each scrape carries for the life of the process.
 */
export const TOOL_LABEL_MAX_CHARS = 64;

const buckets = (defaults: number[]) =>
  z
    .array(z.number().positive())
    .min(1)
    .refine((xs) => xs.every((x, i) => i === 0 || x > (xs[i - 1] as number)), "histogram buckets must be in increasing order")
    .default(defaults);

/** The plugin's `config:` block in config.yaml. Unknown keys are rejected. */
export const metricsConfigSchema = z.strictObject({
  path: z
    .string()
    .regex(/^\/[A-Za-z0-9._~/-]*$/, 'path must start with "/" and use only letters, digits and . _ ~ - /')
    .refine((p) => p !== "/api" && !p.startsWith("/api/") && p !== "/health", "path may not be /health or under /api")
    .default("/metrics")
    .describe("Where the gateway serves the Prometheus text format, at the server root."),
  auth: z
    .union(
      [
        z.literal("api_keys"),
        z.literal("none"),
        z.strictObject({
          bearer_token: z.string().min(16, "bearer_token needs at least 16 characters; use a long random secret (e.g. ${METRICS_TOKEN})"),
        }),
      ],
      { error: 'auth is "api_keys" (the gateway\'s keys), "none", or { bearer_token: "<secret>" } (a scrape token of its own)' },
    )
    .default("api_keys")
    .describe("Who may scrape: the gateway's API keys (default), a dedicated bearer token, or anyone who can reach the port."),
  prefix: z
    .string()
    .regex(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/, "prefix must be a valid Prometheus metric name prefix ([a-zA-Z_:][a-zA-Z0-9_:]*)")
    .default("antler_")
    .describe("Prefix of every metric name."),
  process_metrics: z.boolean().default(false).describe("Also export Node.js process metrics (CPU, memory, event loop lag, GC)."),
  run_seconds_buckets: buckets([0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600]).describe("Buckets of the run duration histogram, in seconds."),
  model_call_seconds_buckets: buckets([0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80]).describe(
    "Buckets of the model-call duration histogram, in seconds.",
  ),
});

export type MetricsConfig = z.output<typeof metricsConfigSchema>;
export type MetricsConfigInput = z.input<typeof metricsConfigSchema>;

// Channel names of the packages this plugin observes, copied so the plugin needs none of them installed; a test
// checks they still match the constants those packages export.
export const OBSERVED_CHANNELS = {
  sse: "antler:gateway:sse",
  batchQueue: "antler:batch:queue",
  schedulerFiring: "antler:scheduler:firing",
  runQueue: "antler:runs:queue",
} as const;
