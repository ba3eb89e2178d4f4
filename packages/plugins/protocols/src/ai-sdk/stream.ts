import { isAntlerError } from "@antler/kernel";
import type { StreamEvent } from "@antler/plugin-runtime";
import { RunEventMapper } from "../run-events.js";
import { errorLine, protocolStreamResponse } from "../sse-stream.js";
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
 * log) both answer with it, so a resumed stream is the same bytes as the first one.
 */
export function uiMessageStreamResponse(options: UiMessageStreamOptions, headers: Record<string, string> = {}): Response {
  const mapper = new RunEventMapper(options.run);
  return protocolStreamResponse(
    {
      items: options.events,
      start: () => chunkFrames(mapper.start().flatMap(encodeUiMessageChunks)),
      encode: (event) => chunkFrames(mapper.map(event).flatMap(encodeUiMessageChunks)),
      end: () => DONE,
      fail: (error) => `${chunkFrames(mapper.fail(errorCode(error), errorLine(error)).flatMap(encodeUiMessageChunks))}${DONE}`,
      cancel: options.onCancel,
      keepAliveMs: options.keepAliveMs,
    },
    { [UI_MESSAGE_STREAM_HEADER]: "v1", "x-run-id": options.run.runId, ...headers },
  );
}

function chunkFrames(chunks: UiMessageChunk[]): string {
  let out = "";
  for (const chunk of chunks) out += `data: ${JSON.stringify(chunk)}\n\n`;
  return out;
}

function errorCode(error: unknown): string {
  return error instanceof RunEndedError ? error.code : isAntlerError(error) ? error.code : "ANTLER_ERR_INTERNAL";
}
