// The channel provider contract: what a platform adapter implements. Nothing here imports the runtime, the
// gateway or a platform SDK, so a third-party provider depends on this file only.

/** What a platform can do; the runtime adapts to it (no live edits without `edits`, a typed reply without `buttons`). */
export interface ChannelCapabilities {
  /** Messages can be edited after sending: the answer streams into one live message. */
  readonly edits: boolean;
  /** Inline buttons under a message (clarification choices). */
  readonly buttons: boolean;
  /** Files can be sent (presented files) and received (uploads, through `download`). */
  readonly files: boolean;
  /** The longest text one message may hold; longer answers are split. */
  readonly maxTextLength: number;
}

/** Where a message goes: a chat, and a thread inside it (forum topic, Slack thread) when the platform has them. */
export interface ChatAddress {
  readonly id: string;
  /** `direct`: a one-to-one chat with the bot (always answered). `group`: answered per `groups.reply`. */
  readonly kind: "direct" | "group";
  readonly workspace?: string | undefined;
  readonly thread?: string | undefined;
}

/** A file attached to an inbound message; its bytes are fetched with the provider's `download` when needed. */
export interface InboundFile {
  /** The platform's file id, passed back to `download`. */
  readonly id: string;
  readonly name: string;
  readonly mimeType?: string | undefined;
  /** Bytes, when the platform says (files over `uploads.max_bytes` are refused without downloading them). */
  readonly size?: number | undefined;
}

/** A press on a button the runtime sent: `value` is the button's `value`. */
export interface ButtonPress {
  readonly value: string;
  /** The message the button was under. */
  readonly messageId: string;
  /** The platform's id for acknowledging the press (Telegram's callback query id). */
  readonly ackId?: string | undefined;
}

/**
 * One inbound event as the provider hands it to the runtime. It must be JSON-serializable: it is journaled as is
 * and processed again after a crash.
 */
export interface InboundMessage {
  /** The platform's id of this event (Telegram `update_id`, Slack `event_id`): the deduplication key. */
  readonly eventId: string;
  readonly chat: ChatAddress;
  readonly sender: { readonly id: string; readonly name?: string | undefined };
  /** The text as the user wrote it (the bot's own mention may stay in; the runtime strips a leading one). */
  readonly text: string;
  readonly files?: readonly InboundFile[] | undefined;
  /** Platform user ids mentioned in the text. */
  readonly mentions?: readonly string[] | undefined;
  /** The bot was mentioned, or the message replies to one of the bot's messages. */
  readonly mentioned?: boolean | undefined;
  readonly button?: ButtonPress | undefined;
}

/** A button under an outbound message. `value` comes back in `ButtonPress.value` (keep it short: Telegram allows 64 bytes). */
export interface OutboundButton {
  readonly label: string;
  readonly value: string;
  /** A hint where the platform colours buttons (Slack's primary / danger); others ignore it. */
  readonly style?: "primary" | "danger" | undefined;
}

/** A file to send: its name and bytes. */
export interface OutboundFile {
  readonly name: string;
  readonly bytes: Uint8Array;
  readonly mimeType?: string | undefined;
}

/** An outbound message. `text` is Markdown; the provider converts it to the platform's format. */
export interface OutboundMessage {
  readonly text: string;
  /** Rows of buttons (only when `capabilities.buttons`). An edit with no `buttons` removes them. */
  readonly buttons?: readonly (readonly OutboundButton[])[] | undefined;
}

export interface SentMessage {
  readonly messageId: string;
}

/** Where a provider hands inbound events. */
export interface ChannelSink {
  /**
   * Journals the event (a repeat of an already journaled `eventId` is a no-op) and schedules its handling.
   * Resolves once the event is stored: acknowledge it to the platform only after that, so a crash never loses it.
   */
  accept(message: InboundMessage): Promise<void>;
}

/**
 * A channel provider: one platform. Implement `send` and at least one delivery mode (`webhook` or `receive`).
 * Throw `ChannelRateLimitError` when the platform says to slow down; the runtime waits and retries.
 */
export interface ChannelProvider {
  /** The platform's name in routes, bindings and commands: `telegram`, `slack`. Letters, digits and `-`. */
  readonly id: string;
  readonly capabilities: ChannelCapabilities;
  /**
   * Webhook delivery, mounted at `POST /channels/<id>/webhook` on `antler serve`. Verify the platform's signature or
   * token first and answer 401 without reading the body when it fails; then `sink.accept` each event, then answer.
   */
  webhook?(request: Request, sink: ChannelSink): Promise<Response>;
  /** Long-connection delivery (polling, sockets): hand events to `sink` until `signal` aborts. */
  receive?(sink: ChannelSink, signal: AbortSignal): Promise<void>;
  send(chat: ChatAddress, message: OutboundMessage): Promise<SentMessage>;
  /** Replace a sent message's text (and buttons). Only with `capabilities.edits`. */
  edit?(chat: ChatAddress, messageId: string, message: OutboundMessage): Promise<void>;
  /** Only with `capabilities.files`. */
  sendFile?(chat: ChatAddress, file: OutboundFile): Promise<SentMessage>;
  /** The bytes of an inbound file. Only with `capabilities.files`. */
  download?(file: InboundFile): Promise<Uint8Array>;
  /** Tell the platform a button press was handled (stops its spinner), optionally with a short notice. */
  acknowledgeButton?(press: ButtonPress, notice?: string): Promise<void>;
  /**
   * Show that a run works on `message` ("typing…", or a reaction on the message where the platform has no typing
   * indicator for bots, as Slack).
   */
  typing?(chat: ChatAddress, message?: InboundMessage): Promise<void>;
  close?(): Promise<void>;
}

/**
 * The platform asked to slow down (HTTP 429 with Retry-After, Telegram's `retry_after`). The runtime waits
 * `retryAfterMs` and retries the same call; edits of a live message are skipped instead.
 */
export class ChannelRateLimitError extends Error {
  readonly code = "ANTLER_ERR_CHANNEL_RATE_LIMITED";
  constructor(
    readonly retryAfterMs: number,
    message = `rate limited: retry after ${retryAfterMs} ms`,
  ) {
    super(message);
    this.name = "ChannelRateLimitError";
  }
}
