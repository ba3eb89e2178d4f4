export {
  CRW_API_KEY_ENV,
  FASTCRW_DEFAULT_BASE_URL,
  FASTCRW_MAX_LIMIT,
  type FastcrwConfig,
  type FastcrwConfigInput,
  fastcrwConfigSchema,
} from "./config.js";
export { type FastcrwSearchCaps, mapFastcrwScrape, mapFastcrwSearchResults } from "./mapping.js";
export { default, FASTCRW_PLUGIN_NAME, fastcrwToolsPlugin } from "./plugin.js";
export { createFastcrwProvider, FASTCRW_PROVIDER_NAME, type FastcrwProviderOptions } from "./provider.js";
