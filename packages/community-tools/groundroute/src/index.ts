export {
  GROUNDROUTE_API_KEY_ENV,
  GROUNDROUTE_DEFAULT_BASE_URL,
  GROUNDROUTE_MAX_RESULTS,
  type GroundrouteConfig,
  type GroundrouteConfigInput,
  groundrouteConfigSchema,
} from "./config.js";
export { type GroundrouteSearchCaps, mapGroundroutePage, mapGroundrouteSearchResults } from "./mapping.js";
export { default, GROUNDROUTE_PLUGIN_NAME, groundrouteToolsPlugin } from "./plugin.js";
export { createGroundrouteProvider, GROUNDROUTE_PROVIDER_NAME, type GroundrouteProviderOptions } from "./provider.js";
