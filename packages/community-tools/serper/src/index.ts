export { SERPER_API_KEY_ENV, SERPER_DEFAULT_BASE_URL, type SerperConfig, type SerperConfigInput, serperConfigSchema } from "./config.js";
export { mapSerperImageResults, mapSerperSearchResults, type SerperMappingCaps } from "./mapping.js";
export { default, SERPER_PLUGIN_NAME, serperToolsPlugin } from "./plugin.js";
export { createSerperProvider, SERPER_PROVIDER_NAME, type SerperProviderOptions } from "./provider.js";
