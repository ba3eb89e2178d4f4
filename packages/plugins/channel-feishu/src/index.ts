export { type FeishuConfig, type FeishuConfigInput, feishuConfigSchema } from "./config.js";
export { default, FEISHU_PLUGIN_NAME } from "./plugin.js";
export { FEISHU_PROVIDER_ID, FeishuProvider, type FeishuProviderOptions } from "./provider.js";
