export { createAzureOpenAIModel } from "./model.js";
export { type AzureOpenAIPluginOptions, createAzureOpenAIPlugin, default } from "./plugin.js";
export { DEFAULT_API_VERSION } from "./settings.js";
