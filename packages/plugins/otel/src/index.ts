export { OTEL_ATTRIBUTES, type OtelConfig, type OtelConfigInput, otelConfigSchema, PLUGIN_NAME } from "./config.js";
export { default, type OtelHandle, otelPlugin } from "./plugin.js";
export type { OtelTracing } from "./tracing.js";
