import { z } from "zod";

/** `plugins[i].config` of `@antler/plugin-channel-github`. */
export const githubConfigSchema = z.strictObject({
  token: z
    .string()
    .min(1, "a GitHub token (a fine-grained personal access token or an app installation token); write `token: $GITHUB_TOKEN`")
    .describe("The token the bot comments with; it needs Issues (and Pull requests) read and write. Keep it in the environment."),
  webhook_secret: z
    .string()
    .min(1, "the webhook's secret; write `webhook_secret: $GITHUB_WEBHOOK_SECRET`")
    .describe("The webhook's secret: every delivery must carry a matching X-Hub-Signature-256."),
  bot_login: z
    .string()
    .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/, "a GitHub login such as antler-bot (an app's login may end in [bot])")
    .describe("The login people mention (@antler-bot) to talk to the bot; its own comments are never answered."),
  api_url: z.url().default("https://api.github.com").describe("The REST API root (GitHub Enterprise: https://<host>/api/v3)."),
  repository: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'an "owner/name" repository')
    .optional()
    .describe('The repository a bare issue number means in chat ids ("12" for owner/name#12), such as in `deliver_to.chat`.'),
  edit_interval_ms: z
    .number()
    .int()
    .min(250)
    .max(60_000)
    .default(2000)
    .describe("Least time between two writes to one comment: GitHub's secondary rate limits punish fast edits."),
});

export type GitHubConfig = z.output<typeof githubConfigSchema>;
export type GitHubConfigInput = z.input<typeof githubConfigSchema>;
