import { definePlugin } from "@antler/kernel";
import { registerChannel } from "@antler/plugin-channels";
import { feishuConfigSchema } from "./config.js";
import { FeishuProvider } from "./provider.js";

export const FEISHU_PLUGIN_NAME = "@antler/plugin-channel-feishu";

/** `@antler/plugin-channel-feishu`: Feishu/Lark bots as a channel, on the official Node SDK. */
export default definePlugin({
  name: FEISHU_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Feishu/Lark channel: event callbacks (token, encrypt key, challenge), cards patched while streaming, card buttons, files.",
  dependsOn: ["@antler/plugin-channels"],
  configSchema: feishuConfigSchema,
  setup(ctx) {
    registerChannel(ctx, () => new FeishuProvider({ config: ctx.config, logger: ctx.logger }), "feishu");
  },
});
