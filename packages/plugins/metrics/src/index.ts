export type { MetricsCollector } from "./collector.js";
export {
  type MetricsConfig,
  type MetricsConfigInput,
  metricsConfigSchema,
  OBSERVED_CHANNELS,
  PLUGIN_NAME,
} from "./config.js";
export { default } from "./plugin.js";
