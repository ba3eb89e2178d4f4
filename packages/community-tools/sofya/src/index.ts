export {
  SOFYA_API_KEY_ENV,
  SOFYA_DEFAULT_BASE_URL,
  SOFYA_DEFAULT_CONTENT_CHARS,
  SOFYA_MAX_RESULTS,
  type SofyaConfig,
  type SofyaConfigInput,
  sofyaConfigSchema,
} from "./config.js";
export { mapSofyaFetchResult, mapSofyaSearchResults, type SofyaSearchCaps } from "./mapping.js";
export { default, SOFYA_PLUGIN_NAME, sofyaToolsPlugin } from "./plugin.js";
export { createSofyaProvider, SOFYA_PROVIDER_NAME, type SofyaProviderOptions } from "./provider.js";
