export { EXA_API_KEY_ENV, EXA_DEFAULT_BASE_URL, type ExaConfig, type ExaConfigInput, exaConfigSchema } from "./config.js";
export { ExaContentsError, type ExaMappingCaps, mapExaContents, mapExaSearchResults } from "./mapping.js";
export { default, EXA_PLUGIN_NAME, exaToolsPlugin } from "./plugin.js";
export { createExaProvider, EXA_PROVIDER_NAME, type ExaProviderOptions } from "./provider.js";
