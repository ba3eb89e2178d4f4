import { sseBody } from "@antler/plugin-gateway/sse";

/** The headers of every protocol's event stream (no buffering by proxies, no caching). */
export const EVENT_STREAM_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  "x-accel-buffering": "no",
} as const;

/** One protocol's SSE stream of a run: what it sends first, per item, last, and on failure; each may be empty text. */
export interface ProtocolStreamSource<T> {
  items: AsyncIterable<T>;
  /** The text before the first item (asked for when the stream starts). */
  start?(): string;
  /** The frames of one item; an item that makes no text sends nothing (and the stream waits for the next). */
  encode(item: T): string;
  /** The protocol's terminal frames after the last item. */
  end?(): string;
  /** The frames for `items` failing (the run failed, or was cancelled by someone else); the stream then ends. */
  fail(error: unknown): string;
  /**
   * The reader went away (no frame for it: nobody is left to read one). `frames` is the stream's text still to
   * come: `drain(frames)` keeps a run that goes on without its reader moving.
   */
  cancel(frames: AsyncGenerator<string>): void;
  /** A comment line this often keeps proxies from closing a quiet stream. */
  keepAliveMs: number;
}

/**
 * The event stream of one run as a 200 answer. The body is the gateway's pull-based SSE body: the next item is read
 * only when the client has taken the previous frame, so a slow reader holds the run back instead of growing a buffer.
 */
export function protocolStreamResponse<T>(source: ProtocolStreamSource<T>, headers: Record<string, string>): Response {
  const frames = streamText(source);
  const body = sseBody<string>({
    preamble: "",
    items: frames,
    frame: (text) => text,
    onError: (error) => source.fail(error),
    onCancel: () => source.cancel(frames),
    keepAliveMs: source.keepAliveMs,
  });
  return new Response(body, { status: 200, headers: { ...EVENT_STREAM_HEADERS, ...headers } });
}

async function* streamText<T>(source: ProtocolStreamSource<T>): AsyncGenerator<string> {
  const first = source.start?.() ?? "";
  if (first !== "") yield first;
  for await (const item of source.items) {
    const text = source.encode(item);
    if (text !== "") yield text;
  }
  const last = source.end?.() ?? "";
  if (last !== "") yield last;
}

/**
 * Reads the rest of a stream nobody listens to any more, so a run that goes on after a hang-up keeps moving;
 * `after` runs once it has ended (or failed).
 */
export function drain(items: AsyncIterator<unknown>, after?: () => Promise<void>): void {
  void (async () => {
    try {
      for (;;) if ((await items.next()).done) return;
    } finally {
      await after?.();
    }
  })().catch(() => undefined);
}

/** An error's message as a stream's error frame shows it: its first line. */
export function errorLine(error: unknown): string {
  return error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
}
