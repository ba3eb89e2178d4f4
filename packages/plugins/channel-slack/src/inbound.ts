// Slack's payloads (Events API callbacks, block_actions interactions, slash commands) as the channel contract's
// inbound messages. The same shapes arrive by HTTP and in Socket Mode envelopes.
import type { ChatAddress, InboundFile, InboundMessage } from "@antler/plugin-channels/contract";
import { slackTextToPlain } from "./mrkdwn.js";

export interface SlackFile {
  id: string;
  name?: string;
  title?: string;
  mimetype?: string;
  size?: number;
}

export interface SlackMessageEvent {
  type: string;
  subtype?: string;
  channel?: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts?: string;
  thread_ts?: string;
  parent_user_id?: string;
  files?: SlackFile[];
  team?: string;
}

export interface SlackEventCallback {
  type: "event_callback";
  event_id?: string;
  team_id?: string;
  event?: SlackMessageEvent;
}

export interface SlackBlockActions {
  type: "block_actions";
  user?: { id: string; username?: string; name?: string; team_id?: string };
  team?: { id: string } | null;
  channel?: { id: string };
  container?: { message_ts?: string; channel_id?: string; thread_ts?: string };
  message?: { ts?: string; thread_ts?: string };
  actions?: Array<{ action_id?: string; value?: string; action_ts?: string }>;
  response_url?: string;
}

/** The fields of a slash command request (form-encoded over HTTP, an object in Socket Mode). */
export interface SlackSlashCommand {
  command?: string;
  text?: string;
  user_id?: string;
  user_name?: string;
  channel_id?: string;
  channel_name?: string;
  team_id?: string;
  trigger_id?: string;
}

export interface InboundOptions {
  botUserId: string;
  replyInThread: boolean;
  slashCommand?: string | undefined;
}

/** Message subtypes that are a person writing (others: edits, joins, bot messages ... are not handled). */
const HANDLED_SUBTYPES = new Set([undefined, "file_share", "thread_broadcast"]);

/** Slack direct-message channel ids start with D. */
const isDirect = (channel: string, channelType?: string) => channelType === "im" || channel.startsWith("D");

/**
 * A `message` or `app_mention` event as an inbound message; undefined for what the bot does not answer (its own
 * messages, other bots, edits). The event id is `<channel>:<ts>`, the message's own key: Slack sends a mention in a
 * channel twice (`app_mention` and `message.channels`, with different event ids), and retries carry the same message,
 * so keying by the message handles both once.
 */
export function fromEventCallback(body: SlackEventCallback, options: InboundOptions): InboundMessage | undefined {
  const event = body.event;
  if (!event || (event.type !== "message" && event.type !== "app_mention")) return undefined;
  if (!HANDLED_SUBTYPES.has(event.subtype) || event.bot_id || !event.user || event.user === options.botUserId) return undefined;
  if (!event.channel || !event.ts) return undefined;
  const direct = isDirect(event.channel, event.channel_type);
  const raw = event.text ?? "";
  const mentions = [...raw.matchAll(/<@([A-Z0-9]+)(?:\|[^>]*)?>/g)].map((m) => m[1] as string);
  const mentioned = event.type === "app_mention" || mentions.includes(options.botUserId) || event.parent_user_id === options.botUserId;
  // The bot's own leading mention is how it was addressed, not part of the question.
  const text = slackTextToPlain(raw.replace(new RegExp(`^\\s*<@${options.botUserId}(?:\\|[^>]*)?>[\\s,:]*`), ""));
  const thread = event.thread_ts ?? (!direct && options.replyInThread ? event.ts : undefined);
  const chat: ChatAddress = {
    id: event.channel,
    kind: direct ? "direct" : "group",
    ...((body.team_id ?? event.team) ? { workspace: body.team_id ?? event.team } : {}),
    ...(thread ? { thread } : {}),
  };
  const files: InboundFile[] = (event.files ?? []).map((f) => ({
    id: f.id,
    name: f.name ?? f.title ?? f.id,
    ...(f.mimetype ? { mimeType: f.mimetype } : {}),
    ...(typeof f.size === "number" ? { size: f.size } : {}),
  }));
  return {
    eventId: `${event.channel}:${event.ts}`,
    chat,
    sender: { id: event.user },
    text,
    ...(files.length > 0 ? { files } : {}),
    mentions,
    mentioned,
  };
}

/** A press on one of the bot's Block Kit buttons; undefined for other interactions (modals, shortcuts). */
export function fromBlockActions(payload: SlackBlockActions): InboundMessage | undefined {
  const action = payload.actions?.[0];
  const channel = payload.channel?.id ?? payload.container?.channel_id;
  const messageTs = payload.container?.message_ts ?? payload.message?.ts;
  if (payload.type !== "block_actions" || !action?.value || !channel || !messageTs || !payload.user?.id) return undefined;
  const thread = payload.message?.thread_ts ?? payload.container?.thread_ts;
  const workspace = payload.team?.id ?? payload.user.team_id;
  return {
    eventId: `action:${channel}:${messageTs}:${action.action_ts ?? action.action_id ?? ""}`,
    chat: {
      id: channel,
      kind: isDirect(channel) ? "direct" : "group",
      ...(workspace ? { workspace } : {}),
      ...(thread && thread !== messageTs ? { thread } : {}),
    },
    sender: { id: payload.user.id, name: payload.user.username ?? payload.user.name },
    text: "",
    mentioned: true,
    button: { value: action.value, messageId: messageTs, ...(payload.response_url ? { ackId: payload.response_url } : {}) },
  };
}

/**
 * A slash command as a channel command: `/connect ABC` stays `/connect ABC`; the configured app command names the
 * command in its text (`/antler status` → `/status`). The trigger id is unique per invocation.
 */
export function fromSlashCommand(command: SlackSlashCommand, options: InboundOptions): InboundMessage | undefined {
  if (!command.command || !command.user_id || !command.channel_id || !command.trigger_id) return undefined;
  const args = (command.text ?? "").trim();
  const text =
    options.slashCommand && command.command === options.slashCommand ? `/${args.replace(/^\//, "")}` : `${command.command} ${args}`.trim();
  return {
    eventId: `command:${command.trigger_id}`,
    chat: {
      id: command.channel_id,
      kind: isDirect(command.channel_id) || command.channel_name === "directmessage" ? "direct" : "group",
      ...(command.team_id ? { workspace: command.team_id } : {}),
    },
    sender: { id: command.user_id, ...(command.user_name ? { name: command.user_name } : {}) },
    text,
    mentioned: true,
  };
}
