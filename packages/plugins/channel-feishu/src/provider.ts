import { createHash, timingSafeEqual } from "node:crypto";
import { getCurrentTraceId, type Logger } from "@antler/kernel";
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
import { AESCipher, Client, EventDispatcher, LoggerLevel, normalize, normalizeCardAction } from "@larksuiteoapi/node-sdk";
import { cardOf } from "./card.js";
import type { FeishuConfig } from "./config.js";

export const FEISHU_PROVIDER_ID = "feishu";
/** A card may hold about 30 KB of JSON; CJK text takes 3 bytes a character. */
const MAX_TEXT = 9000;
/** Feishu's "request trigger frequency limit" codes (sent with HTTP 400 or 429). */
const RATE_LIMIT_CODES = new Set([99991400, 11232, 230020]);
/** How far a signed request's timestamp may be from now: older ones are replays. */
const REPLAY_WINDOW_MS = 5 * 60_000;

const unauthorized = (message: string) => Response.json({ error: { code: "ANTLER_ERR_CHANNEL_UNAUTHORIZED", message } }, { status: 401 });
const badEvent = (message: string) => Response.json({ error: { code: "ANTLER_ERR_CHANNEL_BAD_EVENT", message } }, { status: 400 });

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The SDK's answer to an API call: `code` 0 is success, anything else an error with `msg`. */
interface ApiAnswer {
  code?: number;
  msg?: string;
  data?: { message_id?: string; file_key?: string };
}

/** The wait a failed call asks for, or undefined when it is not a rate limit. */
export function rateLimitWaitMs(err: unknown): number | undefined {
  const e = err as { response?: { status?: number; headers?: Record<string, unknown>; data?: { code?: number } } };
  const status = e?.response?.status;
  const code = e?.response?.data?.code;
  if (status !== 429 && !(typeof code === "number" && RATE_LIMIT_CODES.has(code))) return undefined;
  const headers = e.response?.headers ?? {};
  const seconds = Number(headers["x-ogw-ratelimit-reset"] ?? headers["retry-after"]);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000;
}

/** Events arrive as the flattened form the SDK's dispatcher hands its handlers: header fields and the event's. */
type FlatEvent = Record<string, unknown> & { event_id?: string; token?: string; tenant_key?: string };

/**
 * The SDK's token cache, one per provider: its default is a module-level map shared by every client of an app id,
 * so two providers (or a test's second server) would reuse each other's tenant_access_token.
 */
type CacheKey = Parameters<NonNullable<ConstructorParameters<typeof Client>[0]["cache"]>["get"]>[0];

class TokenCache {
  private readonly values = new Map<unknown, { value: unknown; expiresAt: number | undefined }>();
  async get(key: CacheKey, options?: { namespace?: string }): Promise<unknown> {
    const entry = this.values.get(options?.namespace ? `${options.namespace}/${key.toString()}` : key);
    return entry && (entry.expiresAt === undefined || entry.expiresAt > Date.now()) ? entry.value : undefined;
  }
  async set(key: CacheKey, value: unknown, expiresAt?: number, options?: { namespace?: string }): Promise<boolean> {
    this.values.set(options?.namespace ? `${options.namespace}/${key.toString()}` : key, { value, expiresAt });
    return true;
  }
}

export interface FeishuProviderOptions {
  config: FeishuConfig;
  logger?: Logger | undefined;
}

/**
 * The Feishu/Lark channel provider on `@larksuiteoapi/node-sdk`: event callbacks (`im.message.receive_v1`, and
 * `card.action.trigger` for button presses) through the SDK's `EventDispatcher`, answers sent as interactive cards
 * (so they can be patched while the run streams), files through `im.file` and message resources.
 */
export class FeishuProvider implements ChannelProvider {
  readonly id = FEISHU_PROVIDER_ID;
  readonly capabilities = { edits: true, buttons: true, files: true, maxTextLength: MAX_TEXT } as const;
  readonly client: Client;
  private readonly dispatcher: EventDispatcher;
  private readonly config: FeishuConfig;
  private readonly logger: Logger | undefined;
  private botOpenId: Promise<string> | undefined;

  constructor(options: FeishuProviderOptions) {
    this.config = options.config;
    this.logger = options.logger;
    const sdkLogger = {
      error: (...msg: unknown[]) => this.logger?.debug({ provider: this.id, sdk: msg.map(String).join(" ") }, "feishu sdk error"),
      warn: () => {},
      info: () => {},
      debug: () => {},
      trace: () => {},
    };
    this.client = new Client({
      appId: this.config.app_id,
      appSecret: this.config.app_secret,
      domain: this.config.domain,
      cache: new TokenCache(),
      loggerLevel: LoggerLevel.error,
      logger: sdkLogger,
    });
    // Handlers return what the webhook should do with the event; the dispatcher decrypts and flattens it.
    this.dispatcher = new EventDispatcher({
      verificationToken: this.config.verification_token,
      ...(this.config.encrypt_key ? { encryptKey: this.config.encrypt_key } : {}),
      cache: new TokenCache(),
      loggerLevel: LoggerLevel.error,
      logger: sdkLogger,
    }).register({
      "im.message.receive_v1": async (data: FlatEvent) => ({ flat: data, kind: "message" as const }),
      "card.action.trigger": async (data: FlatEvent) => ({ flat: data, kind: "card" as const }),
    });
  }

  /** Per-call options that stamp the current trace id on the SDK's request. */
  private traced(): { headers: Record<string, string> } {
    const traceId = getCurrentTraceId();
    return { headers: traceId ? { "X-Trace-Id": traceId } : {} };
  }

  /**
   * With an encrypt key: the signature over the raw body is checked before it is parsed (only Feishu's unsigned
   * URL challenge is let through, to be proven by the token it carries). Then the token, then the journal.
   */
  async webhook(request: Request, sink: ChannelSink): Promise<Response> {
    const body = await request.text();
    const signature = request.headers.get("x-lark-signature");
    if (this.config.encrypt_key && signature !== null) {
      const timestamp = request.headers.get("x-lark-request-timestamp") ?? "";
      const nonce = request.headers.get("x-lark-request-nonce") ?? "";
      const expected = createHash("sha256")
        .update(timestamp + nonce + this.config.encrypt_key + body)
        .digest("hex");
      if (!safeEqual(signature, expected)) return this.refuse("X-Lark-Signature does not match the body and the encrypt key");
      if (Math.abs(Date.now() - Number(timestamp) * 1000) > REPLAY_WINDOW_MS) {
        return this.refuse("X-Lark-Request-Timestamp is more than 5 minutes away: a replayed request");
      }
    }
    let data: Record<string, unknown>;
    try {
      data = JSON.parse(body) as Record<string, unknown>;
    } catch {
      return this.config.encrypt_key && signature === null ? this.refuse("unsigned request") : badEvent("the body is not JSON");
    }
    if (this.config.encrypt_key && typeof data.encrypt !== "string") return this.refuse("the encrypt key is set: events must be encrypted");
    const plain = this.decrypt(data);
    if (!plain) return this.refuse("the event does not decrypt with the encrypt key");
    const header = plain.header as { token?: unknown } | undefined;
    const token = String(header?.token ?? plain.token ?? "");
    if (!safeEqual(token, this.config.verification_token)) return this.refuse("the verification token does not match");
    if (plain.type === "url_verification") return Response.json({ challenge: plain.challenge });
    if (this.config.encrypt_key && signature === null) return this.refuse("missing X-Lark-Signature");
    const handled = (await this.dispatcher.invoke(data, { needCheck: false })) as
      | { flat: FlatEvent; kind: "message" | "card" }
      | string
      | undefined;
    if (typeof handled !== "object" || handled === null) return Response.json({});
    const message = handled.kind === "message" ? await this.messageOf(handled.flat) : this.pressOf(handled.flat);
    if (message) await sink.accept(message);
    // A card action's answer may carry a toast or a new card; an empty object leaves the card as the patch made it.
    return Response.json({});
  }

  private refuse(reason: string): Response {
    this.logger?.warn({ provider: this.id, reason }, "feishu webhook refused");
    return unauthorized(reason);
  }

  private decrypt(data: Record<string, unknown>): Record<string, unknown> | undefined {
    if (typeof data.encrypt !== "string") return data;
    if (!this.config.encrypt_key) return undefined;
    try {
      return JSON.parse(new AESCipher(this.config.encrypt_key).decrypt(data.encrypt)) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  }

  private bot(): Promise<string> {
    if (this.config.bot_open_id) return Promise.resolve(this.config.bot_open_id);
    this.botOpenId ??= this.client
      .request<{ code?: number; msg?: string; bot?: { open_id?: string } }>({ method: "GET", url: "/open-apis/bot/v3/info" })
      .then((answer) => {
        if (answer.code !== 0 || !answer.bot?.open_id) throw new Error(`feishu bot/v3/info failed: ${answer.msg ?? answer.code}`);
        return answer.bot.open_id;
      });
    this.botOpenId.catch(() => {
      this.botOpenId = undefined;
    });
    return this.botOpenId;
  }

  /** An `im.message.receive_v1` event as an inbound message (the SDK's normalizer reads text, post, files, mentions). */
  private async messageOf(flat: FlatEvent): Promise<InboundMessage | undefined> {
    const event = flat as unknown as Parameters<typeof normalize>[0] & { sender?: { sender_type?: string } };
    if (!event.message || !event.sender || event.sender.sender_type === "app") return undefined;
    const normalized = await normalize(event, { botIdentity: { openId: await this.bot(), name: "" }, stripBotMentions: true });
    const files: InboundFile[] = normalized.resources
      .filter((r) => r.type === "file" || r.type === "image")
      .map((r) => ({
        id: `${normalized.messageId}:${r.type}:${r.fileKey}`,
        name: r.fileName ?? `${r.type}-${r.fileKey}${r.type === "image" ? ".png" : ""}`,
      }));
    return {
      eventId: String(flat.event_id),
      // No `workspace`: the chat id is unique, and a push (`deliver_to`) addresses a chat by its id alone.
      chat: { id: normalized.chatId, kind: normalized.chatType === "p2p" ? "direct" : "group" },
      sender: { id: normalized.senderId, ...(normalized.senderName ? { name: normalized.senderName } : {}) },
      text: normalized.rawContentType === "text" || normalized.rawContentType === "post" ? normalized.content.trim() : "",
      ...(files.length > 0 ? { files } : {}),
      mentions: normalized.mentions.map((m) => m.openId ?? m.key),
      mentioned: normalized.mentionedBot,
    };
  }

  /** A `card.action.trigger` (a button on one of the bot's cards) as a button press. */
  private pressOf(flat: FlatEvent): InboundMessage | undefined {
    const action = normalizeCardAction(flat as Parameters<typeof normalizeCardAction>[0]);
    const value = (action?.action.value as { v?: unknown } | undefined)?.v;
    if (!action || typeof value !== "string") return undefined;
    return {
      eventId: String(flat.event_id),
      chat: { id: action.chatId, kind: "group" },
      sender: { id: action.operator.openId, ...(action.operator.name ? { name: action.operator.name } : {}) },
      text: "",
      mentioned: true,
      button: { value, messageId: action.messageId },
    };
  }

  /** Runs one SDK call: a rate limit becomes `ChannelRateLimitError`, a non-zero `code` an error naming it. */
  private async call(what: string, request: () => Promise<ApiAnswer>): Promise<ApiAnswer> {
    let answer: ApiAnswer;
    try {
      answer = await request();
    } catch (err) {
      const waitMs = rateLimitWaitMs(err);
      if (waitMs !== undefined) throw new ChannelRateLimitError(waitMs, `feishu ${what}: rate limited, retry after ${waitMs} ms`);
      const data = (err as { response?: { data?: ApiAnswer } }).response?.data;
      throw new Error(`feishu ${what} failed: ${data?.msg ?? (err as Error).message} (code ${data?.code ?? "none"})`);
    }
    if (answer.code !== 0) {
      if (typeof answer.code === "number" && RATE_LIMIT_CODES.has(answer.code)) {
        throw new ChannelRateLimitError(1000, `feishu ${what}: rate limited (code ${answer.code})`);
      }
      throw new Error(`feishu ${what} failed: ${answer.msg} (code ${answer.code})`);
    }
    return answer;
  }

  async send(chat: ChatAddress, message: OutboundMessage): Promise<SentMessage> {
    const answer = await this.call("im.message.create", () =>
      this.client.im.message.create(
        {
          params: { receive_id_type: "chat_id" },
          data: { receive_id: chat.id, msg_type: "interactive", content: JSON.stringify(cardOf(message)) },
        },
        this.traced(),
      ),
    );
    if (!answer.data?.message_id) throw new Error("feishu im.message.create answered without a message_id");
    return { messageId: answer.data.message_id };
  }

  async edit(_chat: ChatAddress, messageId: string, message: OutboundMessage): Promise<void> {
    await this.call("im.message.patch", () =>
      this.client.im.message.patch({ path: { message_id: messageId }, data: { content: JSON.stringify(cardOf(message)) } }, this.traced()),
    );
  }

  async sendFile(chat: ChatAddress, file: OutboundFile): Promise<SentMessage> {
    let uploaded: { file_key?: string } | null;
    try {
      uploaded = await this.client.im.file.create(
        { data: { file_type: "stream", file_name: file.name, file: Buffer.from(file.bytes) } },
        this.traced(),
      );
    } catch (err) {
      const waitMs = rateLimitWaitMs(err);
      if (waitMs !== undefined) throw new ChannelRateLimitError(waitMs, `feishu im.file.create: rate limited, retry after ${waitMs} ms`);
      throw err;
    }
    if (!uploaded?.file_key) throw new Error(`feishu im.file.create gave no file_key for ${file.name}`);
    const fileKey = uploaded.file_key;
    const answer = await this.call("im.message.create", () =>
      this.client.im.message.create(
        {
          params: { receive_id_type: "chat_id" },
          data: { receive_id: chat.id, msg_type: "file", content: JSON.stringify({ file_key: fileKey }) },
        },
        this.traced(),
      ),
    );
    return { messageId: answer.data?.message_id ?? fileKey };
  }

  async download(file: InboundFile): Promise<Uint8Array> {
    const [messageId, type, fileKey] = file.id.split(":");
    if (!messageId || !type || !fileKey) throw new Error(`feishu file id "${file.id}" is not <message>:<type>:<key>`);
    const resource = await this.client.im.messageResource.get(
      { path: { message_id: messageId, file_key: fileKey }, params: { type } },
      this.traced(),
    );
    const chunks: Buffer[] = [];
    for await (const chunk of resource.getReadableStream()) chunks.push(Buffer.from(chunk as Uint8Array));
    return new Uint8Array(Buffer.concat(chunks));
  }

  async acknowledgeButton(_press: ButtonPress): Promise<void> {
    // The webhook's answer acknowledges the press; Feishu has no separate call for it.
  }
}
