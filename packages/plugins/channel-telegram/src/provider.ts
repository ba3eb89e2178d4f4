import { timingSafeEqual } from "node:crypto";
import { fetchWithTraceId, type Logger } from "@antler/kernel";
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
import { Api, GrammyError, InputFile } from "grammy";
import type { InlineKeyboardMarkup, Message, Update, UserFromGetMe } from "grammy/types";
import type { TelegramConfig } from "./config.js";
import { markdownToTelegramHtml } from "./markdown.js";

export const TELEGRAM_PROVIDER_ID = "telegram";
/** Telegram's limit is 4096 characters after entity parsing; leave room for the live message's markers. */
const MAX_TEXT = 4000;
const SECRET_HEADER = "x-telegram-bot-api-secret-token";

/**
 * grammY builds multipart bodies (files) as Node streams with a `connection` header, for node-fetch; the
 * platform `fetch` refuses that header and wants bytes, so the header goes and streamed bodies are read into a
 * buffer first. The wrapper also stamps the current trace id on every call.
 */
function traceFetch(): typeof fetch {
  const traced = fetchWithTraceId(globalThis.fetch);
  return (async (input: string | URL | Request, given?: RequestInit) => {
    let init = given;
    if (init?.headers) {
      const headers = new Headers(init.headers);
      headers.delete("connection");
      init = { ...init, headers };
    }
    const body = init?.body as unknown;
    if (body && typeof body === "object" && Symbol.asyncIterator in (body as object) && !(body instanceof ReadableStream)) {
      const chunks: Uint8Array[] = [];
      for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
        chunks.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
      }
      return traced(input, { ...init, body: Buffer.concat(chunks) });
    }
    return traced(input, init);
  }) as typeof fetch;
}

/** A Telegram API error as the contract wants it: 429 becomes a `ChannelRateLimitError` with Telegram's `retry_after`. */
function translate(err: unknown): never {
  if (err instanceof GrammyError && err.error_code === 429) {
    throw new ChannelRateLimitError((err.parameters.retry_after ?? 1) * 1000, `telegram ${err.method}: ${err.description}`);
  }
  throw err;
}

function keyboard(message: OutboundMessage): InlineKeyboardMarkup {
  return {
    inline_keyboard: (message.buttons ?? []).map((row) => row.map((b) => ({ text: b.label, callback_data: b.value.slice(0, 64) }))),
  };
}

function chatKind(type: string): ChatAddress["kind"] {
  return type === "private" ? "direct" : "group";
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export interface TelegramProviderOptions {
  config: TelegramConfig;
  logger?: Logger | undefined;
}

/** The Telegram channel provider on grammY's `Api`, pointed at `config.api_root`. */
export class TelegramProvider implements ChannelProvider {
  readonly id = TELEGRAM_PROVIDER_ID;
  readonly capabilities = { edits: true, buttons: true, files: true, maxTextLength: MAX_TEXT } as const;
  readonly api: Api;
  private me: Promise<UserFromGetMe> | undefined;
  private readonly config: TelegramConfig;
  private readonly logger: Logger | undefined;
  readonly receive: ChannelProvider["receive"];
  readonly webhook: ChannelProvider["webhook"];

  constructor(options: TelegramProviderOptions) {
    this.config = options.config;
    this.logger = options.logger;
    this.api = new Api(this.config.token, { apiRoot: this.config.api_root.replace(/\/+$/, ""), fetch: traceFetch() });
    // One delivery mode per bot: Telegram refuses getUpdates while a webhook is set.
    this.receive = this.config.mode === "polling" ? (sink, signal) => this.poll(sink, signal) : undefined;
    this.webhook = this.config.mode === "webhook" ? (request, sink) => this.onWebhook(request, sink) : undefined;
  }

  private bot(): Promise<UserFromGetMe> {
    this.me ??= this.api.getMe();
    this.me.catch(() => {
      this.me = undefined;
    });
    return this.me;
  }

  /** Verifies the secret token before reading the body; journals the update; only then answers 200. */
  private async onWebhook(request: Request, sink: ChannelSink): Promise<Response> {
    const secret = this.config.webhook_secret ?? "";
    const given = request.headers.get(SECRET_HEADER);
    if (secret === "" || given === null || !safeEqual(given, secret)) {
      this.logger?.warn({ provider: this.id }, "telegram webhook refused: bad or missing secret token");
      return Response.json(
        { error: { code: "ANTLER_ERR_CHANNEL_UNAUTHORIZED", message: "bad or missing X-Telegram-Bot-Api-Secret-Token" } },
        { status: 401 },
      );
    }
    let update: Update;
    try {
      update = (await request.json()) as Update;
    } catch {
      return Response.json(
        { error: { code: "ANTLER_ERR_CHANNEL_BAD_EVENT", message: "the body is not a JSON Telegram Update" } },
        { status: 400 },
      );
    }
    if (typeof update?.update_id !== "number") {
      return Response.json({ error: { code: "ANTLER_ERR_CHANNEL_BAD_EVENT", message: "the body has no update_id" } }, { status: 400 });
    }
    const message = await this.toInbound(update);
    if (message) await sink.accept(message);
    return new Response(null, { status: 200 });
  }

  /**
   * Long polling. Telegram forgets updates below the next call's `offset`, so the offset moves past an update only
   * after the sink journaled it: a crash between the two re-delivers it, and the journal drops the repeat.
   */
  private async poll(sink: ChannelSink, signal: AbortSignal): Promise<void> {
    // grammY types its signal with the abort-controller polyfill's class; the platform's is the same at run time.
    const apiSignal = signal as unknown as Parameters<Api["getUpdates"]>[1];
    await this.api.deleteWebhook({ drop_pending_updates: false }, apiSignal).catch(translate);
    let offset = 0;
    let backoffMs = 500;
    while (!signal.aborted) {
      try {
        const updates = await this.api.getUpdates(
          { offset, timeout: this.config.poll_timeout_seconds, allowed_updates: ["message", "callback_query"] },
          apiSignal,
        );
        for (const update of updates) {
          const message = await this.toInbound(update);
          if (message) await sink.accept(message);
          offset = update.update_id + 1;
        }
        backoffMs = 500;
      } catch (err) {
        if (signal.aborted) return;
        const waitMs = err instanceof GrammyError && err.error_code === 429 ? (err.parameters.retry_after ?? 1) * 1000 : backoffMs;
        this.logger?.warn({ err, provider: this.id, wait_ms: waitMs }, "telegram getUpdates failed; retrying");
        await new Promise((resolve) => setTimeout(resolve, waitMs));
        backoffMs = Math.min(backoffMs * 2, 30_000);
      }
    }
  }

  /** A Telegram update as an inbound message; undefined for kinds the channel does not handle. */
  async toInbound(update: Update): Promise<InboundMessage | undefined> {
    const eventId = String(update.update_id);
    const query = update.callback_query;
    if (query) {
      const chat = query.message?.chat;
      if (!chat || !query.message || query.data === undefined) return undefined;
      return {
        eventId,
        chat: address(query.message),
        sender: { id: String(query.from.id), name: query.from.username ?? query.from.first_name },
        text: "",
        mentioned: true,
        button: { value: query.data, messageId: String(query.message.message_id), ackId: query.id },
      };
    }
    const msg = update.message;
    if (!msg?.from) return undefined;
    const text = msg.text ?? msg.caption ?? "";
    const entities = msg.entities ?? msg.caption_entities ?? [];
    const files = filesOf(msg);
    let mentioned = false;
    const mentions: string[] = [];
    if (msg.chat.type !== "private") {
      const me = this.config.bot_username ? { username: this.config.bot_username, id: undefined } : await this.bot();
      for (const entity of entities) {
        if (entity.type === "mention") {
          const name = text.slice(entity.offset + 1, entity.offset + entity.length);
          mentions.push(name);
          if (name.toLowerCase() === me.username.toLowerCase()) mentioned = true;
        } else if (entity.type === "text_mention") {
          mentions.push(String(entity.user.id));
          if (entity.user.id === me.id) mentioned = true;
        } else if (entity.type === "bot_command") {
          const command = text.slice(entity.offset, entity.offset + entity.length);
          if (command.toLowerCase().endsWith(`@${me.username.toLowerCase()}`)) mentioned = true;
        }
      }
      const replyTo = msg.reply_to_message?.from;
      if (replyTo?.is_bot && (replyTo.username ?? "").toLowerCase() === me.username.toLowerCase()) mentioned = true;
    }
    return {
      eventId,
      chat: address(msg),
      sender: { id: String(msg.from.id), name: msg.from.username ?? msg.from.first_name },
      text,
      ...(files.length > 0 ? { files } : {}),
      mentions,
      mentioned,
    };
  }

  async send(chat: ChatAddress, message: OutboundMessage): Promise<SentMessage> {
    const thread = chat.thread ? { message_thread_id: Number(chat.thread) } : {};
    const markup = message.buttons?.length ? { reply_markup: keyboard(message) } : {};
    try {
      const sent = await this.api
        .sendMessage(chat.id, markdownToTelegramHtml(message.text), { parse_mode: "HTML", ...thread, ...markup })
        .catch((err) => {
          // Telegram refuses HTML it cannot parse; the words matter more than the formatting.
          if (err instanceof GrammyError && err.error_code === 400 && /parse entities/i.test(err.description)) {
            return this.api.sendMessage(chat.id, message.text, { ...thread, ...markup });
          }
          throw err;
        });
      return { messageId: String(sent.message_id) };
    } catch (err) {
      translate(err);
    }
  }

  async edit(chat: ChatAddress, messageId: string, message: OutboundMessage): Promise<void> {
    try {
      await this.api.editMessageText(chat.id, Number(messageId), markdownToTelegramHtml(message.text), {
        parse_mode: "HTML",
        reply_markup: keyboard(message),
      });
    } catch (err) {
      // The same text again is an error on Telegram's side, and no change on ours.
      if (err instanceof GrammyError && err.error_code === 400 && /not modified/i.test(err.description)) return;
      translate(err);
    }
  }

  async sendFile(chat: ChatAddress, file: OutboundFile): Promise<SentMessage> {
    try {
      const sent = await this.api.sendDocument(chat.id, new InputFile(file.bytes, file.name), {
        ...(chat.thread ? { message_thread_id: Number(chat.thread) } : {}),
      });
      return { messageId: String(sent.message_id) };
    } catch (err) {
      translate(err);
    }
  }

  async download(file: InboundFile): Promise<Uint8Array> {
    const info = await this.api.getFile(file.id).catch(translate);
    if (!info.file_path) throw new Error(`telegram getFile gave no file_path for ${file.name}`);
    const root = this.config.api_root.replace(/\/+$/, "");
    const response = await traceFetch()(`${root}/file/bot${this.config.token}/${info.file_path}`);
    if (!response.ok) throw new Error(`telegram file download failed: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }

  async acknowledgeButton(press: ButtonPress, notice?: string): Promise<void> {
    if (!press.ackId) return;
    await this.api.answerCallbackQuery(press.ackId, notice ? { text: notice } : {}).catch(translate);
  }

  async typing(chat: ChatAddress): Promise<void> {
    await this.api.sendChatAction(chat.id, "typing", chat.thread ? { message_thread_id: Number(chat.thread) } : {}).catch(translate);
  }
}

function address(msg: Message): ChatAddress {
  const thread = msg.is_topic_message && msg.message_thread_id !== undefined ? String(msg.message_thread_id) : undefined;
  return { id: String(msg.chat.id), kind: chatKind(msg.chat.type), ...(thread ? { thread } : {}) };
}

function filesOf(msg: Message): InboundFile[] {
  const files: InboundFile[] = [];
  if (msg.document) {
    files.push({
      id: msg.document.file_id,
      name: msg.document.file_name ?? `document-${msg.document.file_unique_id}`,
      mimeType: msg.document.mime_type,
      size: msg.document.file_size,
    });
  }
  const photo = msg.photo?.at(-1);
  if (photo) files.push({ id: photo.file_id, name: `photo-${photo.file_unique_id}.jpg`, mimeType: "image/jpeg", size: photo.file_size });
  return files;
}
