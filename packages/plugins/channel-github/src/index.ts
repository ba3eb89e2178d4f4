export { type GitHubConfig, type GitHubConfigInput, githubConfigSchema } from "./config.js";
export { default, GITHUB_PLUGIN_NAME } from "./plugin.js";
export { GITHUB_PROVIDER_ID, GitHubProvider, type GitHubProviderOptions, parseIssueChat } from "./provider.js";
