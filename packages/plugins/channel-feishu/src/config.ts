import { z } from "zod";

/** `plugins[i].config` of `@antler/plugin-channel-feishu`. */
export const feishuConfigSchema = z.strictObject({
  app_id: z
    .string()
    .regex(/^cli_[A-Za-z0-9]+$/, "an app id from the developer console, such as cli_a1b2c3; write `app_id: $FEISHU_APP_ID`")
    .describe("The app's App ID."),
  app_secret: z.string().min(1, "the app's App Secret; write `app_secret: $FEISHU_APP_SECRET`").describe("The app's App Secret."),
  verification_token: z
    .string()
    .min(1, "the event subscription's Verification Token; write `verification_token: $FEISHU_VERIFICATION_TOKEN`")
    .describe("Every event must carry it; events without it get 401."),
  encrypt_key: z
    .string()
    .min(1)
    .optional()
    .describe("The Encrypt Key: events arrive AES-256-CBC encrypted and signed (X-Lark-Signature), and are refused unsigned."),
  domain: z
    .string()
    .default("feishu")
    .transform((d) => (d === "feishu" ? "https://open.feishu.cn" : d === "lark" ? "https://open.larksuite.com" : d.replace(/\/+$/, "")))
    .pipe(z.url("feishu, lark, or the open API's base URL"))
    .describe("feishu (open.feishu.cn), lark (open.larksuite.com), or a base URL."),
  bot_open_id: z.string().min(1).optional().describe("The bot's open_id, for mention detection; default: asked with /bot/v3/info."),
});

export type FeishuConfig = z.output<typeof feishuConfigSchema>;
export type FeishuConfigInput = z.input<typeof feishuConfigSchema>;
