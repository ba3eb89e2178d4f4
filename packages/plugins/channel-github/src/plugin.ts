import { definePlugin } from "@antler/kernel";
import { registerChannel } from "@antler/plugin-channels";
import { githubConfigSchema } from "./config.js";
import { GitHubProvider } from "./provider.js";

export const GITHUB_PLUGIN_NAME = "@antler/plugin-channel-github";

/** `@antler/plugin-channel-github`: issue and pull request comments as a channel, on Octokit. */
export default definePlugin({
  name: GITHUB_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "GitHub channel on Octokit: signed issue_comment webhooks in, comments (edited while streaming) out.",
  dependsOn: ["@antler/plugin-channels"],
  configSchema: githubConfigSchema,
  setup(ctx) {
    registerChannel(ctx, () => new GitHubProvider({ config: ctx.config, logger: ctx.logger }), "github");
  },
});
