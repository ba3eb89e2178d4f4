import { z } from "zod";

export const PLUGIN_NAME = "@antler/plugin-otel";

/** Span attribute names Antler sets, next to the OpenTelemetry GenAI conventions (`gen_ai.*`). */
export const OTEL_ATTRIBUTES = {
  traceId: "antler.trace_id",
  runId: "antler.run_id",
  threadId: "antler.thread_id",
  outcome: "antler.run.outcome",
  parentRunId: "antler.run.parent_run_id",
  middleware: "antler.middleware.name",
  hook: "antler.middleware.hook",
  plugin: "antler.plugin",
  user: "user.id",
} as const;

const ratio = (what: string) => z.number().min(0, `${what} is a fraction from 0 to 1`).max(1, `${what} is a fraction from 0 to 1`);

/** The plugin's `config:` block in config.yaml. Unknown keys are rejected. */
export const otelConfigSchema = z.strictObject({
  endpoint: z
    .url({
      protocol: /^https?$/,
      error: "endpoint must be an http(s) URL of an OTLP/HTTP traces endpoint, e.g. http://localhost:4318/v1/traces",
    })
    .default("http://localhost:4318/v1/traces")
    .describe(
      "OTLP/HTTP traces endpoint, the full URL (Jaeger and Tempo: http://host:4318/v1/traces; Langfuse: https://<host>/api/public/otel/v1/traces).",
    ),
  headers: z
    .record(z.string().min(1), z.string())
    .default({})
    .describe(
      "Headers on every export, e.g. Authorization: Basic <base64 of public:secret key> for Langfuse, x-honeycomb-team for Honeycomb.",
    ),
  service_name: z.string().min(1).default("antler").describe("`service.name` of the exported resource."),
  sample_ratio: ratio("sample_ratio")
    .default(1)
    .describe(
      "Share of traces recorded, decided at the root. An incoming sampled traceparent is followed; an unsampled one is decided by this ratio, so a caller cannot switch tracing off.",
    ),
  middleware_span_ratio: ratio("middleware_span_ratio")
    .default(0)
    .describe("Share of middleware hook calls (beforeModel, afterAgent, ...) recorded as spans: 0 none, 1 every one."),
  user: z
    .enum(["hashed", "omitted"], { error: 'user must be "hashed" (a salted SHA-256 of the user id) or "omitted"' })
    .default("hashed")
    .describe("How the user id appears on spans (`user.id`)."),
  user_hash_salt: z.string().default("").describe("Salt for the hashed user id, so a hash cannot be matched against a list of known ids."),
  propagate: z
    .boolean()
    .default(true)
    .describe("Send W3C traceparent on outgoing requests that carry X-Trace-Id (model providers, MCP over HTTP, web tools)."),
  accept_traceparent: z.boolean().default(true).describe("Parent a gateway run's span on the request's W3C traceparent."),
  export_delay_ms: z
    .number()
    .int()
    .min(1)
    .max(60_000)
    .default(2000)
    .describe("Longest wait before finished spans are exported in a batch."),
  export_timeout_ms: z.number().int().min(100).max(120_000).default(10_000).describe("Timeout of one export request."),
});

export type OtelConfig = z.output<typeof otelConfigSchema>;
export type OtelConfigInput = z.input<typeof otelConfigSchema>;
