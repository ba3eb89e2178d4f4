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

function sseText(frame: LangGraphFrame, id: string | undefined): string {
  return `event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n${id === undefined ? "" : `id: ${id}\n`}\n`;
}

/**
 * A frame group as SSE text: `event:`, `data:` and `id:` per frame, the frames the client already has (at or before
 * `resume`) left out; empty when it has them all.
 */
export function renderFrameGroup(group: FrameGroup, resume: ResumePoint | null): string {
  let text = "";
  group.frames.forEach((frame, k) => {
    if (!delivered(resume, group.seq, k)) text += sseText(frame, frameId(group.seq, k, group.frames.length));
  });
  return text;
}
