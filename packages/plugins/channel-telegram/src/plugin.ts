import { definePlugin } from "@antler/kernel";
import { registerChannel } from "@antler/plugin-channels";
import { telegramConfigSchema } from "./config.js";
import { TelegramProvider } from "./provider.js";

export const TELEGRAM_PLUGIN_NAME = "@antler/plugin-channel-telegram";

/** `@antler/plugin-channel-telegram`: Telegram as a channel, by webhook or long polling, on grammY. */
export default definePlugin({
  name: TELEGRAM_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Telegram channel on grammY: webhook with secret token, or long polling; live edits, inline keyboards, files.",
  dependsOn: ["@antler/plugin-channels"],
  configSchema: telegramConfigSchema,
  setup(ctx) {
    registerChannel(ctx, () => new TelegramProvider({ config: ctx.config, logger: ctx.logger }), "telegram");
  },
});
