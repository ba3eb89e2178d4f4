import type { ChannelProvider, ChatAddress, OutboundFile, OutboundMessage, SentMessage } from "./contract.js";
import { ChannelRateLimitError } from "./contract.js";
import type { ChannelStore } from "./store.js";

/** Waits `ms`, or less when `signal` aborts. */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}

/**
 * Sends through a provider with retries: a rate limit waits its `retryAfterMs` (capped at 5 minutes), any other
 * failure backs off 0.5 s, 1 s, 2 s ... Each send has a slot in the outbox (`<event>#<slot>`), so a retried answer
 * (a restart after a crash) never posts the same message twice.
 */
export class Outbound {
  constructor(
    private readonly provider: ChannelProvider,
    private readonly store: ChannelStore,
    private readonly attempts: number,
    private readonly onRetry: (info: { op: string; attempt: number; waitMs: number; rateLimited: boolean; err: unknown }) => void,
  ) {}

  async retry<T>(op: string, call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        if (attempt >= this.attempts) throw err;
        const rateLimited = err instanceof ChannelRateLimitError || (err as { code?: unknown })?.code === "ANTLER_ERR_CHANNEL_RATE_LIMITED";
        const waitMs = rateLimited
          ? Math.min(Math.max(0, (err as ChannelRateLimitError).retryAfterMs), 300_000)
          : Math.min(500 * 2 ** (attempt - 1), 30_000);
        this.onRetry({ op, attempt, waitMs, rateLimited, err });
        await sleep(waitMs);
      }
    }
  }

  /** Sends once per `slot`: a slot already in the outbox returns its message without sending. */
  async send(slot: string, chat: ChatAddress, message: OutboundMessage): Promise<SentMessage> {
    const known = await this.store.outboxGet(slot);
    if (known !== undefined) return { messageId: known };
    const sent = await this.retry("send", () => this.provider.send(chat, message));
    await this.store.outboxPut(slot, sent.messageId);
    return sent;
  }

  async sendFile(slot: string, chat: ChatAddress, file: OutboundFile): Promise<void> {
    if (!this.provider.sendFile) return;
    const sendFile = this.provider.sendFile.bind(this.provider);
    if ((await this.store.outboxGet(slot)) !== undefined) return;
    const sent = await this.retry("sendFile", () => sendFile(chat, file));
    await this.store.outboxPut(slot, sent.messageId);
  }

  async edit(chat: ChatAddress, messageId: string, message: OutboundMessage): Promise<void> {
    if (!this.provider.edit) return;
    const edit = this.provider.edit.bind(this.provider);
    await this.retry("edit", () => edit(chat, messageId, message));
  }
}

/** Splits text into pieces of at most `max` characters, at a paragraph or line break when there is one. */
export function splitText(text: string, max: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let cut = rest.lastIndexOf("\n\n", max);
    if (cut < max / 2) cut = rest.lastIndexOf("\n", max);
    if (cut < max / 2) cut = rest.lastIndexOf(" ", max);
    if (cut < max / 2) cut = max;
    pieces.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest.length > 0 || pieces.length === 0) pieces.push(rest);
  return pieces;
}
