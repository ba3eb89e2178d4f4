import { z } from "zod";

const scopedIds = z.array(z.string().regex(/^[a-z0-9-]+:.+$/, 'a "<provider>:<id>" entry, such as "telegram:123456"')).default([]);

/** `plugins[i].config` of `@antler/plugin-channels`. */
export const channelsConfigSchema = z.strictObject({
  default_user: z
    .string()
    .min(1)
    .max(128)
    .nullable()
    .default(null)
    .describe("Antler user that unbound platform users act as; null: they get a reply that says how to connect."),
  allow: z
    .strictObject({
      users: scopedIds.describe('Platform users allowed to talk to the bot ("telegram:<user id>"); empty: everyone.'),
      chats: scopedIds.describe('Chats the bot answers in ("telegram:<chat id>"); empty: every chat.'),
      workspaces: scopedIds.describe("Workspaces (Slack teams, Feishu tenants) the bot answers in; empty: all."),
    })
    .prefault({}),
  groups: z
    .strictObject({
      reply: z
        .enum(["mention", "all"])
        .default("mention")
        .describe("In group chats: answer only when mentioned or replied to (mention), or every message (all). DMs: always."),
    })
    .prefault({}),
  stream: z
    .strictObject({
      edit_interval_ms: z
        .number()
        .int()
        .min(200)
        .max(60_000)
        .default(1000)
        .describe("Least time between two edits of the live message (Telegram allows about one a second per chat)."),
      show_tools: z.boolean().default(true).describe("Show tool calls compactly in the live message."),
    })
    .prefault({}),
  connect_code_ttl_seconds: z.number().int().min(30).max(86_400).default(600).describe("How long a `/connect` code is valid."),
  send_attempts: z.number().int().min(1).max(20).default(5).describe("Tries per outbound send when the platform rate-limits or fails."),
  lease_seconds: z
    .number()
    .min(1)
    .max(3600)
    .default(60)
    .describe("How long an instance holds an event it handles; an event held by a dead instance is handled again after it."),
  retention_days: z
    .number()
    .min(1)
    .max(3650)
    .default(7)
    .describe("Handled events (and their outbox entries) are deleted after this; a platform retry later than this would run again."),
  recovery_interval_seconds: z
    .number()
    .min(0.2)
    .max(3600)
    .default(15)
    .describe("How often open events (a crashed instance's) are looked for."),
  max_upload_bytes: z
    .number()
    .int()
    .positive()
    .default(20 * 1024 * 1024)
    .describe("Inbound files larger than this are refused."),
  model: z.string().min(1).optional().describe("The `models:` entry channel runs use; default the conversation's, then default_model."),
  agent: z.string().min(1).optional().describe("A custom agent channel runs use unless `/agent` picked another."),
  run_in_gateway: z.boolean().default(true).describe("Run long-connection providers (polling) inside `antler serve`."),
});

export type ChannelsConfig = z.output<typeof channelsConfigSchema>;
export type ChannelsConfigInput = z.input<typeof channelsConfigSchema>;
