import { AntlerError, fetchWithTraceId, type Logger } from "@antler/kernel";
import {
  type ButtonPress,
  type ChannelProvider,
  ChannelRateLimitError,
  type ChannelSink,
  type ChatAddress,
  type InboundFile,
  type InboundMessage,
  type OutboundFile,
  type OutboundMessage,
  type SentMessage,
} from "@antler/plugin-channels/contract";
import { LogLevel, SocketModeClient } from "@slack/socket-mode";
import { ErrorCode, type FilesUploadV2Arguments, WebClient } from "@slack/web-api";
import type { SlackConfig } from "./config.js";
import {
  fromBlockActions,
  fromEventCallback,
  fromSlashCommand,
  type InboundOptions,
  type SlackBlockActions,
  type SlackEventCallback,
  type SlackSlashCommand,
} from "./inbound.js";
import { markdownToMrkdwn } from "./mrkdwn.js";
import { checkSignatureHeaders, signatureMatches } from "./signature.js";

export const SLACK_PROVIDER_ID = "slack";
/** A section block holds at most 3000 characters; every message is one section (plus its buttons). */
const MAX_TEXT = 3000;

type Blocks = NonNullable<Extract<Parameters<WebClient["chat"]["update"]>[0], { blocks: unknown }>["blocks"]>;

const unauthorized = (message: string) => Response.json({ error: { code: "ANTLER_ERR_CHANNEL_UNAUTHORIZED", message } }, { status: 401 });
const badEvent = (message: string) => Response.json({ error: { code: "ANTLER_ERR_CHANNEL_BAD_EVENT", message } }, { status: 400 });

/** A Web API error as the contract wants it: a 429 becomes a `ChannelRateLimitError` with Slack's Retry-After. */
function translate(err: unknown): never {
  const e = err as { code?: unknown; retryAfter?: unknown; message?: string };
  if (e?.code === ErrorCode.RateLimitedError && typeof e.retryAfter === "number") {
    throw new ChannelRateLimitError(e.retryAfter * 1000, `slack: ${e.message ?? "rate limited"}`);
  }
  throw err;
}

/** The message as Block Kit: one mrkdwn section, then one actions block per row of buttons. */
export function toBlocks(message: OutboundMessage): Blocks {
  const blocks: Blocks = [{ type: "section", text: { type: "mrkdwn", text: markdownToMrkdwn(message.text) || " " } }];
  (message.buttons ?? []).forEach((row, r) => {
    blocks.push({
      type: "actions",
      block_id: `antler_row_${r}`,
      elements: row.map((button, i) => ({
        type: "button",
        action_id: `antler_${r}_${i}`,
        text: { type: "plain_text", text: button.label.slice(0, 75), emoji: true },
        value: button.value.slice(0, 2000),
        ...(button.style ? { style: button.style } : {}),
      })),
    });
  });
  return blocks;
}

export interface SlackProviderOptions {
  config: SlackConfig;
  logger?: Logger | undefined;
}

/**
 * The Slack channel provider on `@slack/web-api` (pointed at `config.api_url`) and, in socket mode,
 * `@slack/socket-mode`. Webhook mode takes Events API callbacks, block_actions and slash commands on one URL.
 */
export class SlackProvider implements ChannelProvider {
  readonly id = SLACK_PROVIDER_ID;
  readonly capabilities = { edits: true, buttons: true, files: true, maxTextLength: MAX_TEXT } as const;
  readonly web: WebClient;
  readonly receive: ChannelProvider["receive"];
  readonly webhook: ChannelProvider["webhook"];
  private readonly config: SlackConfig;
  private readonly logger: Logger | undefined;
  private readonly fetch = fetchWithTraceId(globalThis.fetch);
  private botUser: Promise<string> | undefined;

  constructor(options: SlackProviderOptions) {
    this.config = options.config;
    this.logger = options.logger;
    // Rate limits and retries are the runtime's: a 429 surfaces at once with its Retry-After.
    this.web = new WebClient(this.config.bot_token, {
      slackApiUrl: this.apiUrl(),
      fetch: this.fetch,
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 0 },
      logLevel: LogLevel.ERROR,
    });
    this.receive = this.config.mode === "socket" ? (sink, signal) => this.socket(sink, signal) : undefined;
    this.webhook = this.config.mode === "webhook" ? (request, sink) => this.onWebhook(request, sink) : undefined;
  }

  private apiUrl(): string {
    return this.config.api_url.endsWith("/") ? this.config.api_url : `${this.config.api_url}/`;
  }

  /** The bot's user id (config, or auth.test once). */
  botUserId(): Promise<string> {
    if (this.config.bot_user_id) return Promise.resolve(this.config.bot_user_id);
    this.botUser ??= this.web.auth.test().then((r) => {
      if (!r.user_id) throw new Error("slack auth.test returned no user_id");
      return r.user_id;
    });
    this.botUser.catch(() => {
      this.botUser = undefined;
    });
    return this.botUser;
  }

  private async inboundOptions(): Promise<InboundOptions> {
    return { botUserId: await this.botUserId(), replyInThread: this.config.reply_in_thread, slashCommand: this.config.slash_command };
  }

  /**
   * One URL for Events API callbacks (JSON), interactions (form `payload=`) and slash commands (form). The signature
   * headers are checked before the body is read; the body's HMAC before it is parsed. Events are journaled before
   * the 200 goes back, so Slack retries what a crash lost, and the journal drops the retry of what it did not.
   */
  private async onWebhook(request: Request, sink: ChannelSink): Promise<Response> {
    const secret = this.config.signing_secret ?? "";
    const headers = checkSignatureHeaders(request.headers, this.config.timestamp_tolerance_seconds);
    if (secret === "" || typeof headers === "string") {
      this.logger?.warn({ provider: this.id, reason: headers }, "slack webhook refused");
      return unauthorized(`bad request signature (${typeof headers === "string" ? headers : "no signing secret"})`);
    }
    const raw = new Uint8Array(await request.arrayBuffer());
    if (!signatureMatches(secret, headers.timestamp, raw, headers.signature)) {
      this.logger?.warn({ provider: this.id, reason: "bad signature" }, "slack webhook refused");
      return unauthorized("bad request signature (X-Slack-Signature does not match the body)");
    }
    const text = new TextDecoder().decode(raw);
    const retry = request.headers.get("x-slack-retry-num");
    if (retry)
      this.logger?.info({ provider: this.id, retry_num: retry, reason: request.headers.get("x-slack-retry-reason") }, "slack retry");
    const type = request.headers.get("content-type") ?? "";
    let message: InboundMessage | undefined;
    if (type.includes("application/json")) {
      let body: { type?: string; challenge?: string };
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        return badEvent("the body is not JSON");
      }
      if (body.type === "url_verification") return Response.json({ challenge: body.challenge ?? "" });
      if (body.type !== "event_callback") return new Response(null, { status: 200 });
      message = fromEventCallback(body as SlackEventCallback, await this.inboundOptions());
    } else if (type.includes("application/x-www-form-urlencoded")) {
      const form = new URLSearchParams(text);
      const payload = form.get("payload");
      if (payload !== null) {
        let parsed: SlackBlockActions;
        try {
          parsed = JSON.parse(payload) as SlackBlockActions;
        } catch {
          return badEvent("the interaction payload is not JSON");
        }
        message = fromBlockActions(parsed);
      } else if (form.has("command")) {
        message = fromSlashCommand(Object.fromEntries(form) as SlackSlashCommand, await this.inboundOptions());
      } else {
        return badEvent("a form body without payload or command");
      }
    } else {
      return badEvent(`unexpected content-type "${type}"`);
    }
    if (message) await sink.accept(message);
    return new Response(null, { status: 200 });
  }

  /** Socket Mode: each envelope is journaled, then acknowledged; an envelope not acknowledged is sent again. */
  private async socket(sink: ChannelSink, signal: AbortSignal): Promise<void> {
    const client = new SocketModeClient({
      appToken: this.config.app_token ?? "",
      clientOptions: { slackApiUrl: this.apiUrl(), fetch: this.fetch },
      logLevel: LogLevel.ERROR,
    });
    client.on("slack_event", async (envelope: { ack: (response?: unknown) => Promise<void>; type: string; body: unknown }) => {
      try {
        const options = await this.inboundOptions();
        const message =
          envelope.type === "events_api"
            ? fromEventCallback(envelope.body as SlackEventCallback, options)
            : envelope.type === "interactive"
              ? fromBlockActions(envelope.body as SlackBlockActions)
              : envelope.type === "slash_commands"
                ? fromSlashCommand(envelope.body as SlackSlashCommand, options)
                : undefined;
        if (message) await sink.accept(message);
        await envelope.ack();
      } catch (err) {
        // Not acknowledged: Slack delivers the envelope again.
        this.logger?.warn({ err, provider: this.id, type: envelope.type }, "slack socket event not journaled");
      }
    });
    client.on("error", (err: unknown) => this.logger?.warn({ err, provider: this.id }, "slack socket error"));
    if (signal.aborted) return;
    const stopped = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    await Promise.race([client.start(), stopped]);
    await stopped;
    await client.disconnect().catch(() => {});
  }

  async send(chat: ChatAddress, message: OutboundMessage): Promise<SentMessage> {
    try {
      const sent = await this.web.chat.postMessage({
        channel: chat.id,
        text: markdownToMrkdwn(message.text),
        blocks: toBlocks(message),
        unfurl_links: false,
        ...(chat.thread ? { thread_ts: chat.thread } : {}),
      });
      if (!sent.ts) throw new Error("slack chat.postMessage returned no ts");
      return { messageId: sent.ts };
    } catch (err) {
      translate(err);
    }
  }

  async edit(chat: ChatAddress, messageId: string, message: OutboundMessage): Promise<void> {
    try {
      // blocks always replace the old ones, so an edit without buttons removes them.
      await this.web.chat.update({ channel: chat.id, ts: messageId, text: markdownToMrkdwn(message.text), blocks: toBlocks(message) });
    } catch (err) {
      translate(err);
    }
  }

  async sendFile(chat: ChatAddress, file: OutboundFile): Promise<SentMessage> {
    if (file.bytes.byteLength > this.config.max_file_bytes) {
      throw new AntlerError(
        "ANTLER_ERR_CHANNEL_FILE_TOO_LARGE",
        `${file.name} has ${file.bytes.byteLength} bytes, over the ${this.config.max_file_bytes} the Slack channel sends`,
        { where: "plugins[@antler/plugin-channel-slack].config.max_file_bytes", hint: "Raise max_file_bytes (at most 1 GB)." },
      );
    }
    try {
      const upload: FilesUploadV2Arguments = chat.thread
        ? { channel_id: chat.id, thread_ts: chat.thread, file: Buffer.from(file.bytes), filename: file.name }
        : { channel_id: chat.id, file: Buffer.from(file.bytes), filename: file.name };
      const result = (await this.web.filesUploadV2(upload)) as { files?: Array<{ files?: Array<{ id?: string }> }> };
      const id = result.files?.[0]?.files?.[0]?.id;
      if (!id) throw new Error(`slack files upload of ${file.name} returned no file id`);
      return { messageId: id };
    } catch (err) {
      translate(err);
    }
  }

  /** files.info for the private download URL, then the bytes with the bot token (only from Slack's own hosts). */
  async download(file: InboundFile): Promise<Uint8Array> {
    const info = await this.web.files.info({ file: file.id }).catch(translate);
    const url = info.file?.url_private_download ?? info.file?.url_private;
    if (!url) throw new Error(`slack files.info gave no download URL for ${file.name}`);
    this.requireSlackHost(url, "file download");
    const response = await this.fetch(url, { headers: { authorization: `Bearer ${this.config.bot_token}` } });
    if (!response.ok) throw new Error(`slack file download failed: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }

  /**
   * Slack shows bots no typing indicator: the message being worked on gets `working_reaction` instead. Only for a
   * person's message (its event id is `<channel>:<ts>`), not for button presses or slash commands.
   */
  async typing(chat: ChatAddress, message?: InboundMessage): Promise<void> {
    const reaction = this.config.working_reaction;
    const ts = message?.eventId.startsWith(`${chat.id}:`) ? message.eventId.slice(chat.id.length + 1) : undefined;
    if (!reaction || !ts || message?.button) return;
    try {
      await this.web.reactions.add({ channel: chat.id, timestamp: ts, name: reaction });
    } catch (err) {
      // Retried events and crash recoveries react again: already_reacted is success.
      if ((err as { data?: { error?: string } }).data?.error === "already_reacted") return;
      translate(err);
    }
  }

  /** The HTTP ack already stopped the spinner; a notice goes to the presser alone through the response URL. */
  async acknowledgeButton(press: ButtonPress, notice?: string): Promise<void> {
    if (!notice || !press.ackId) return;
    this.requireSlackHost(press.ackId, "response_url");
    const response = await this.fetch(press.ackId, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ response_type: "ephemeral", replace_original: false, text: notice }),
    });
    if (response.status === 429) throw new ChannelRateLimitError(Number(response.headers.get("retry-after") ?? 1) * 1000);
  }

  /** The bot token goes only to Slack (or to the configured API's host, a test double or proxy). */
  private requireSlackHost(url: string, what: string): void {
    const target = new URL(url);
    const api = new URL(this.apiUrl());
    const slack = target.protocol === "https:" && (target.hostname === "slack.com" || target.hostname.endsWith(".slack.com"));
    if (!slack && target.origin !== api.origin) throw new Error(`slack ${what} URL ${target.origin} is not Slack's; refused`);
  }
}
