export { type TelegramConfig, type TelegramConfigInput, telegramConfigSchema } from "./config.js";
export { markdownToTelegramHtml } from "./markdown.js";
export { default, TELEGRAM_PLUGIN_NAME } from "./plugin.js";
export { TELEGRAM_PROVIDER_ID, TelegramProvider, type TelegramProviderOptions } from "./provider.js";
