export { TAVILY_API_KEY_ENV, type TavilyConfig, type TavilyConfigInput, tavilyConfigSchema } from "./config.js";
export { default } from "./plugin.js";
export { createTavilyProvider, TAVILY_PROVIDER, type TavilyProviderOptions } from "./provider.js";
