export {
  INFOQUEST_API_KEY_ENV,
  INFOQUEST_DEFAULT_READER_URL,
  INFOQUEST_DEFAULT_SEARCH_URL,
  type InfoquestConfig,
  type InfoquestConfigInput,
  infoquestConfigSchema,
} from "./config.js";
export { type InfoquestCaps, mapInfoquestImageResults, mapInfoquestSearchResults } from "./mapping.js";
export { default, INFOQUEST_PLUGIN_NAME, infoquestToolsPlugin } from "./plugin.js";
export { createInfoquestProvider, INFOQUEST_PROVIDER_NAME, type InfoquestProviderOptions } from "./provider.js";
