export {
  SERPLY_API_KEY_ENV,
  SERPLY_DEFAULT_BASE_URL,
  SERPLY_PROXY_LOCATIONS,
  type SerplyConfig,
  type SerplyConfigInput,
  serplyConfigSchema,
} from "./config.js";
export { mapSerplySearchResults, type SerplyMappingCaps } from "./mapping.js";
export { default, SERPLY_PLUGIN_NAME, serplyToolsPlugin } from "./plugin.js";
export { createSerplyProvider, SERPLY_PROVIDER_NAME, type SerplyProviderOptions, serplySearchPath } from "./provider.js";
