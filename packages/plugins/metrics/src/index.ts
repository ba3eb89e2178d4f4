export type { MetricsCollector } from "./collector.js";
export {
  type MetricsConfig,
  type MetricsConfigInput,
  metricsConfigSchema,
  OBSERVED_CHANNELS,
  OTHER_TOOL_LABEL,
  PLUGIN_NAME,
  TOOL_LABEL_MAX_CHARS,
} from "./config.js";
export { default } from "./plugin.js";
