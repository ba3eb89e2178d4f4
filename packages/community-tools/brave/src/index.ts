export { BRAVE_API_KEY_ENV, BRAVE_DEFAULT_BASE_URL, type BraveConfig, type BraveConfigInput, braveConfigSchema } from "./config.js";
export { type BraveMappingCaps, mapBraveImageResults, mapBraveWebResults } from "./mapping.js";
export { BRAVE_PLUGIN_NAME, braveToolsPlugin, default } from "./plugin.js";
export { BRAVE_PROVIDER_NAME, type BraveProviderOptions, braveRateLimitWait, createBraveProvider } from "./provider.js";
