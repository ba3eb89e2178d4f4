import { definePlugin } from "@antler/kernel";
import { registerChannel } from "@antler/plugin-channels";
import { slackConfigSchema } from "./config.js";
import { SlackProvider } from "./provider.js";

export const SLACK_PLUGIN_NAME = "@antler/plugin-channel-slack";

/** `@antler/plugin-channel-slack`: Slack as a channel, by Events API webhook or Socket Mode, on Slack's SDKs. */
export default definePlugin({
  name: SLACK_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description:
    "Slack channel on @slack/web-api and @slack/socket-mode: signed webhooks or Socket Mode; live edits, Block Kit buttons, files.",
  dependsOn: ["@antler/plugin-channels"],
  configSchema: slackConfigSchema,
  setup(ctx) {
    registerChannel(ctx, () => new SlackProvider({ config: ctx.config, logger: ctx.logger }), "slack");
  },
});
