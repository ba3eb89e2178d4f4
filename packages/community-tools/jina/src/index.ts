export { JINA_API_KEY_ENV, type JinaConfig, type JinaConfigInput, jinaConfigSchema } from "./config.js";
export { default } from "./plugin.js";
export { createJinaProvider, JINA_PROVIDER, type JinaProviderOptions } from "./provider.js";
