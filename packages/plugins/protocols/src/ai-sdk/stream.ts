import { isAntlerError } from "@antler/kernel";
import { sseBody } from "@antler/plugin-gateway/sse";
import type { StreamEvent } from "@antler/plugin-runtime";
import { RunEventMapper } from "../run-events.js";
import { encodeUiMessageChunks, type UiMessageChunk } from "./encoder.js";

/** The header the AI SDK's transport checks to know it reads a UI message stream, and its version. */
export const UI_MESSAGE_STREAM_HEADER = "x-vercel-ai-ui-message-stream";
const DONE = "data: [DONE]\n\n";

/** Which run a stream shows: the ids the `start` and `finish` chunks carry. */
export interface StreamedRun {
  runId: string;
  threadId: string;
  traceId: string;
}

export interface UiMessageStreamOptions {
  run: StreamedRun;
  /** The run's events from its start: a live run's own stream, or the run event log's replay of it. */
  events: AsyncIterable<StreamEvent>;
  /** The reader went away (stop, a closed tab): stop the source. */
  onCancel(frames: AsyncGenerator<string>): void;
  keepAliveMs: number;
}

/** An error the run ended with, as a followed run's `error` event reports it (a coded error, not a thrown one). */
export class RunEndedError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The UI message stream of one run as an HTTP answer: `data: <chunk>` per UI message chunk, `data: [DONE]` last,
 * comment lines while quiet. The POST route (a new run) and the resume route (a run followed through the event
 * log) both answer with it, so a resumed stream is the same bytes as the first one. The body is pull-based (the
 * gateway's SSE body): the next run event is read only when the client has taken the previous frame, so a slow
 * reader holds the run back instead of growing a buffer.
 */
export function uiMessageStreamResponse(options: UiMessageStreamOptions, headers: Record<string, string> = {}): Response {
  const mapper = new RunEventMapper(options.run);
  const frames = uiMessageFrames(mapper, options.events);
  const body = sseBody<string>({
    preamble: "",
    items: frames,
    frame: (text) => text,
    onError: (error) => `${chunkFrames(mapper.fail(...errorFields(error)).flatMap(encodeUiMessageChunks))}${DONE}`,
    onCancel: () => options.onCancel(frames),
    keepAliveMs: options.keepAliveMs,
  });
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      [UI_MESSAGE_STREAM_HEADER]: "v1",
      "x-run-id": options.run.runId,
      ...headers,
    },
  });
}

/** The stream's text, one piece per run event that yields chunks (events that yield none are skipped). */
async function* uiMessageFrames(mapper: RunEventMapper, events: AsyncIterable<StreamEvent>): AsyncGenerator<string> {
  yield chunkFrames(mapper.start().flatMap(encodeUiMessageChunks));
  for await (const event of events) {
    const text = chunkFrames(mapper.map(event).flatMap(encodeUiMessageChunks));
    if (text !== "") yield text;
  }
  yield DONE;
}

function chunkFrames(chunks: UiMessageChunk[]): string {
  let out = "";
  for (const chunk of chunks) out += `data: ${JSON.stringify(chunk)}\n\n`;
  return out;
}

function errorFields(error: unknown): [code: string, message: string] {
  const code = error instanceof RunEndedError ? error.code : isAntlerError(error) ? error.code : "ANTLER_ERR_INTERNAL";
  const message = error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
  return [code, message];
}

/** Reads the rest of a stream nobody listens to any more, so a run that goes on after a hang-up keeps moving. */
export function drain(frames: AsyncGenerator<string>): void {
  void (async () => {
    for (;;) if ((await frames.next()).done) return;
  })().catch(() => undefined);
}
