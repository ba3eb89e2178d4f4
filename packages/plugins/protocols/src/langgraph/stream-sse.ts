import type { LangGraphFrame } from "./stream-encoder.js";

/** The frames one Antler run event became, under the event's seq (0: not an event of the run, no id). */
export interface FrameGroup {
  seq: number;
  frames: LangGraphFrame[];
}

/**
 * Where a client resumes: after frame `index` of event `seq` (`index` undefined: after all of that event's frames).
 * Frame ids are the Antler event seq they came from: the last frame of an event carries `<seq>`, earlier ones
 * `<seq>.<k>`, so a cut between two frames of one event resumes exactly after the frame received.
 */
export interface ResumePoint {
  seq: number;
  index?: number;
}

/** `Last-Event-ID` → a resume point; none, empty or `-1` (useStream's "from the start") is `null`. */
export function parseLastEventId(raw: string | null | undefined): ResumePoint | null | "invalid" {
  const text = raw?.trim();
  if (text === undefined || text === "" || text === "-1" || text === "0") return null;
  const match = /^(\d{1,15})(?:\.(\d{1,6}))?$/.exec(text);
  if (!match) return "invalid";
  return { seq: Number(match[1]), ...(match[2] !== undefined ? { index: Number(match[2]) } : {}) };
}

function frameId(seq: number, k: number, count: number): string | undefined {
  if (seq <= 0) return undefined;
  return k === count - 1 ? String(seq) : `${seq}.${k}`;
}

/** Whether frame `k` of event `seq` is at or before the resume point (the client has it). */
function delivered(resume: ResumePoint | null, seq: number, k: number): boolean {
  if (!resume || seq <= 0) return false;
  if (seq !== resume.seq) return seq < resume.seq;
  return resume.index === undefined || k <= resume.index;
}

export interface LangGraphSseOptions {
  groups: AsyncGenerator<FrameGroup>;
  resume: ResumePoint | null;
  /** Frames for a failure of `groups` itself (the run failed or was cancelled mid-stream). */
  fail(error: unknown): FrameGroup;
  /** The client went away. */
  cancel(): void;
  keepAliveMs: number;
}

const encoder = new TextEncoder();

function sseText(frame: LangGraphFrame, id: string | undefined): string {
  return `event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n${id === undefined ? "" : `id: ${id}\n`}\n`;
}

/**
 * The SSE body: `event:`, `data:` and `id:` per frame, frames the client already has skipped, a comment line while
 * quiet. Pulled one event at a time, so the run advances only as the client takes what it was sent.
 */
export function langGraphSseBody(options: LangGraphSseOptions): ReadableStream<Uint8Array> {
  let pending: Promise<IteratorResult<FrameGroup>> | undefined;
  let finished = false;
  const render = (group: FrameGroup) => {
    let text = "";
    group.frames.forEach((frame, k) => {
      if (!delivered(options.resume, group.seq, k)) text += sseText(frame, frameId(group.seq, k, group.frames.length));
    });
    return text;
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // Events the client already has make no text: keep pulling until something is sent (or it is quiet).
        while (!finished) {
          pending ??= options.groups.next();
          let timer: ReturnType<typeof setTimeout> | undefined;
          const tick = new Promise<"tick">((resolve) => {
            timer = setTimeout(() => resolve("tick"), options.keepAliveMs);
          });
          try {
            const step = await Promise.race([pending, tick]);
            if (finished) return;
            if (step === "tick") {
              controller.enqueue(encoder.encode(": heartbeat\n\n"));
              return;
            }
            pending = undefined;
            if (step.done) {
              finished = true;
              controller.close();
              return;
            }
            const text = render(step.value);
            if (text !== "") {
              controller.enqueue(encoder.encode(text));
              return;
            }
          } catch (error) {
            pending = undefined;
            if (finished) return;
            finished = true;
            const text = render(options.fail(error));
            if (text !== "") controller.enqueue(encoder.encode(text));
            controller.close();
            return;
          } finally {
            clearTimeout(timer);
          }
        }
      },
      cancel() {
        finished = true;
        options.cancel();
      },
    },
    { highWaterMark: 1 },
  );
}

export const LANGGRAPH_SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  "x-accel-buffering": "no",
} as const;
