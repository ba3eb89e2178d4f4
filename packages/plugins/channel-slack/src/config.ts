import { z } from "zod";

/** `plugins[i].config` of `@antler/plugin-channel-slack`. */
export const slackConfigSchema = z
  .strictObject({
    bot_token: z
      .string()
      .regex(/^xoxb-[A-Za-z0-9-]+$/, "a bot token (xoxb-...) from the app's OAuth & Permissions page; write `bot_token: $SLACK_BOT_TOKEN`")
      .describe("The bot user OAuth token. Keep it in the environment: `bot_token: $SLACK_BOT_TOKEN`."),
    mode: z
      .enum(["webhook", "socket"])
      .default("webhook")
      .describe(
        "webhook: Slack POSTs events, button presses and slash commands to /channels/slack/webhook on `antler serve`. socket: Socket Mode in `antler channels run` (or serve).",
      ),
    signing_secret: z
      .string()
      .regex(/^[A-Za-z0-9]{16,128}$/, "the app's signing secret (Basic Information page): letters and digits")
      .optional()
      .describe("Verifies every webhook request (X-Slack-Signature, v0 HMAC-SHA256). Required in webhook mode."),
    app_token: z
      .string()
      .regex(/^xapp-[A-Za-z0-9-]+$/, "an app-level token (xapp-...) with connections:write; write `app_token: $SLACK_APP_TOKEN`")
      .optional()
      .describe("Opens Socket Mode connections. Required in socket mode."),
    api_url: z.url().default("https://slack.com/api/").describe("The Web API's base URL (a test double, or a proxy)."),
    bot_user_id: z
      .string()
      .regex(/^[UW][A-Z0-9]{2,}$/, "a Slack user id such as U0123ABCD")
      .optional()
      .describe("The bot's user id, for mention detection; default: asked with auth.test on first use."),
    slash_command: z
      .string()
      .regex(/^\/[a-z0-9_-]{1,31}$/, 'a slash command such as "/antler"')
      .optional()
      .describe(
        'One app command whose text is the channel command: "/antler status" is /status. Other commands (/connect) pass as they are.',
      ),
    reply_in_thread: z
      .boolean()
      .default(true)
      .describe("Answer a channel message in a thread under it (each such thread is one conversation); DMs are answered in place."),
    working_reaction: z
      .string()
      .regex(/^[a-z0-9_+-]{1,64}$/, 'an emoji name without colons, such as "eyes"')
      .nullable()
      .default("eyes")
      .describe("Reaction added (reactions.add, scope reactions:write) to a message the bot starts working on; null: none."),
    max_file_bytes: z
      .number()
      .int()
      .positive()
      .max(1024 * 1024 * 1024)
      .default(100 * 1024 * 1024)
      .describe("Files the bot sends larger than this are refused before uploading (Slack's own limit is 1 GB)."),
    timestamp_tolerance_seconds: z
      .number()
      .int()
      .min(1)
      .max(300)
      .default(300)
      .describe("Webhook requests whose X-Slack-Request-Timestamp is further than this from now are refused (replays)."),
  })
  .refine((c) => c.mode !== "webhook" || c.signing_secret !== undefined, {
    message: "webhook mode needs signing_secret (write `signing_secret: $SLACK_SIGNING_SECRET`); without it anyone could post events",
    path: ["signing_secret"],
  })
  .refine((c) => c.mode !== "socket" || c.app_token !== undefined, {
    message: "socket mode needs app_token (an xapp-... token with connections:write; write `app_token: $SLACK_APP_TOKEN`)",
    path: ["app_token"],
  });

export type SlackConfig = z.output<typeof slackConfigSchema>;
export type SlackConfigInput = z.input<typeof slackConfigSchema>;
