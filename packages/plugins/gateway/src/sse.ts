import diagnosticsChannel from "node:diagnostics_channel";

/** Every SSE body the gateway serves publishes `open` when it starts and `close` once when it ends (done, failed or cancelled). */
export const GATEWAY_SSE_CHANNEL = "antler:gateway:sse";
export interface GatewaySseEvent {
  readonly type: "open" | "close";
}

/** One SSE frame: `event:` and one `data:` line (JSON never contains a raw newline), then a blank line. */
export function sseFrame(event: string, data: unknown, id?: number): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n${id === undefined ? "" : `id: ${id}\n`}\n`;
}

/** The same frame from JSON text already written (a logged event). */
export function sseFrameRaw(event: string, json: string, id?: number): string {
  return `event: ${event}\ndata: ${json}\n${id === undefined ? "" : `id: ${id}\n`}\n`;
}

const KEEPALIVE = ": keep-alive\n\n";

export interface SseSource<T> {
  /** Frames sent before the first item (e.g. the run's metadata). */
  readonly preamble: string;
  readonly items: AsyncIterator<T>;
  /** Turns one item into a frame. */
  frame(item: T, seq: number): string;
  /**
   * Called once when the source fails; returns the last frame to send (the stream then ends). `seq` is the
   * number the next item would have had.
   */
  onError(error: unknown, seq: number): string;
  /** The peer went away: stop the source. */
  onCancel(): void;
  keepAliveMs: number;
}

/**
 * A pull-based SSE body: the next item is only requested when the socket drains, so a slow client slows its
 * run instead of buffering it in memory. A quiet source gets keep-alive comments so proxies keep the
 * connection open.
 */
export function sseBody<T>(source: SseSource<T>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let pending: Promise<IteratorResult<T>> | undefined;
  let seq = 0;
  let finished = false;
  const channel = diagnosticsChannel.channel(GATEWAY_SSE_CHANNEL);
  // Only a stream whose `open` was published publishes `close`, so a subscriber that joins late never counts below zero.
  let open = false;
  const closed = () => {
    if (open) channel.publish({ type: "close" } satisfies GatewaySseEvent);
    open = false;
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        open = channel.hasSubscribers;
        if (open) channel.publish({ type: "open" } satisfies GatewaySseEvent);
        if (source.preamble) controller.enqueue(encoder.encode(source.preamble));
      },
      async pull(controller) {
        if (finished) return;
        pending ??= source.items.next();
        let timer: NodeJS.Timeout | undefined;
        const tick = new Promise<"tick">((resolve) => {
          timer = setTimeout(() => resolve("tick"), source.keepAliveMs);
        });
        try {
          const step = await Promise.race([pending, tick]);
          // Cancelled while waiting (the peer went away): the controller is closed, and the item is not ours to send.
          if (finished) return;
          if (step === "tick") {
            controller.enqueue(encoder.encode(KEEPALIVE));
            return;
          }
          pending = undefined;
          if (step.done) {
            finished = true;
            closed();
            controller.close();
            return;
          }
          seq += 1;
          controller.enqueue(encoder.encode(source.frame(step.value, seq)));
        } catch (error) {
          pending = undefined;
          if (finished) return;
          finished = true;
          closed();
          controller.enqueue(encoder.encode(source.onError(error, seq + 1)));
          controller.close();
        } finally {
          clearTimeout(timer);
        }
      },
      cancel() {
        finished = true;
        closed();
        source.onCancel();
      },
    },
    // One frame at a time: the run only advances when the client has taken the previous frame.
    { highWaterMark: 1 },
  );
}
