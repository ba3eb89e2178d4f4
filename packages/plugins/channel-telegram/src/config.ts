import { z } from "zod";

/** `plugins[i].config` of `@antler/plugin-channel-telegram`. */
export const telegramConfigSchema = z
  .strictObject({
    token: z
      .string()
      .regex(/^\d+:[A-Za-z0-9_-]+$/, "a bot token from @BotFather, such as 123456:ABC-DEF...; write `token: $TELEGRAM_BOT_TOKEN`")
      .describe("The bot token. Keep it in the environment: `token: $TELEGRAM_BOT_TOKEN`."),
    mode: z
      .enum(["webhook", "polling"])
      .default("webhook")
      .describe(
        "webhook: Telegram POSTs to /channels/telegram/webhook on `antler serve`. polling: getUpdates in `antler channels run` (or serve).",
      ),
    webhook_secret: z
      .string()
      .regex(/^[A-Za-z0-9_-]{16,256}$/, "16 to 256 of A-Z, a-z, 0-9, _ and -, as Telegram's secret_token allows")
      .optional()
      .describe("The secret_token given to setWebhook; every webhook request must carry it. Required in webhook mode."),
    api_root: z.url().default("https://api.telegram.org").describe("The Bot API server (a local Bot API server, or a test double)."),
    bot_username: z
      .string()
      .regex(/^[A-Za-z0-9_]{3,64}$/)
      .optional()
      .describe("The bot's @username, for mention detection in groups; default: asked with getMe on first use."),
    poll_timeout_seconds: z.number().int().min(0).max(50).default(25).describe("Long polling: how long one getUpdates waits for updates."),
  })
  .refine((c) => c.mode !== "webhook" || c.webhook_secret !== undefined, {
    message: "webhook mode needs webhook_secret (write `webhook_secret: $TELEGRAM_WEBHOOK_SECRET`); without it anyone could post updates",
    path: ["webhook_secret"],
  });

export type TelegramConfig = z.output<typeof telegramConfigSchema>;
export type TelegramConfigInput = z.input<typeof telegramConfigSchema>;
