export { type SlackConfig, type SlackConfigInput, slackConfigSchema } from "./config.js";
export { fromBlockActions, fromEventCallback, fromSlashCommand } from "./inbound.js";
export { markdownToMrkdwn, slackTextToPlain } from "./mrkdwn.js";
export { default, SLACK_PLUGIN_NAME } from "./plugin.js";
export { SLACK_PROVIDER_ID, SlackProvider, type SlackProviderOptions, toBlocks } from "./provider.js";
export { slackSignature } from "./signature.js";
