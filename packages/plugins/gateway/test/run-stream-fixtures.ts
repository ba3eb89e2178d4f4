import { setTimeout as sleep } from "node:timers/promises";
import { definePlugin, emitCustomEvent } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import type { ScriptFunction } from "@antler/kernel/testing";
import { z } from "zod";
import type { RunningGateway } from "../src/server.js";
import { applyValuesFrame, type ValuesFrame, type ValuesState } from "../src/values-delta.js";
import type { SseFrame } from "./fixtures.js";

/** A tool that emits `count` custom events `{type: "tick", n}`, `delayMs` apart: a run that streams for a while. */
export const tickerTools = definePlugin({
  name: "ticker-tools",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(
      defineTool({
        name: "ticker",
        description: "Emits ticks.",
        schema: z.object({ count: z.number().int(), delay_ms: z.number().int() }),
        run: async ({ count, delay_ms }, runtime) => {
          for (let n = 1; n <= count; n++) {
            await sleep(delay_ms);
            await emitCustomEvent({ type: "tick", n }, runtime as never);
          }
          return `ticked ${count} times`;
        },
      }),
    );
  },
});

export const ANSWER = Array.from({ length: 30 }, (_, i) => `word${i + 1}`).join(" ");

/** Calls the ticker (count ticks, delayMs apart), then answers with a 30-word text (30 deltas). */
export function tickingScript(count = 40, delayMs = 15): ScriptFunction {
  return (messages) =>
    messages.at(-1)?.getType() === "tool"
      ? { text: ANSWER, usage: { input_tokens: 9, output_tokens: 30 } }
      : { toolCalls: [{ name: "ticker", args: { count, delay_ms: delayMs } }], usage: { input_tokens: 5, output_tokens: 2 } };
}

export interface ReadResult {
  frames: SseFrame[];
  /** Set when the body broke off (the connection dropped) instead of ending. */
  error?: unknown;
}

/** Reads SSE frames until the body ends or breaks; `onFrame` sees each one as it arrives. */
export async function readFrames(response: Response, onFrame?: (frame: SseFrame, index: number) => void): Promise<ReadResult> {
  const frames: SseFrame[] = [];
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { frames };
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf("\n\n");
        let event = "message";
        let data: string | undefined;
        let id: string | undefined;
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const at = line.indexOf(":");
          const field = line.slice(0, at);
          const text = line.slice(at + 1).replace(/^ /, "");
          if (field === "event") event = text;
          else if (field === "data") data = text;
          else if (field === "id") id = text;
        }
        if (data === undefined) continue;
        const frame: SseFrame = { event, data: JSON.parse(data), ...(id ? { id } : {}) };
        frames.push(frame);
        onFrame?.(frame, frames.length - 1);
      }
    }
  } catch (error) {
    return { frames, error };
  }
}

/**
 * Starts watching `gateway` for the next request whose path ends with `pathSuffix`; `drop()` destroys that
 * request's socket on the server's side, as a proxy or a network failure would.
 */
export function socketDropper(gateway: Pick<RunningGateway, "server">, pathSuffix: string): { drop(): void } {
  let socket: import("node:net").Socket | undefined;
  const onRequest = (request: import("node:http").IncomingMessage) => {
    if (!socket && request.url?.split("?")[0]?.endsWith(pathSuffix)) socket = request.socket;
  };
  gateway.server.on("request", onRequest);
  return {
    drop() {
      gateway.server.off("request", onRequest);
      if (!socket) throw new Error(`no request for ${pathSuffix} reached the server`);
      socket.destroy();
    },
  };
}

const VARYING = new Set(["id", "tool_call_id", "run_id", "trace_id", "thread_id"]);

/** A frame list without what legitimately differs between two runs of one script (ids, the thread and run). */
export function normalized(frames: readonly SseFrame[]): Array<{ event: string; data: unknown }> {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (value && typeof value === "object") {
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, VARYING.has(k) && v !== undefined && v !== null ? "<id>" : walk(v)]),
      );
    }
    return value;
  };
  return frames.map((f) => ({ event: f.event, data: walk(f.data) }));
}

/** The ids of the frames, as numbers. */
export function ids(frames: readonly SseFrame[]): number[] {
  return frames.map((f) => Number(f.id));
}

/**
 * The frames with each `values` frame's data replaced by the state a client holds after it (a snapshot replaces,
 * a patch applies to the state so far, starting from `start`: the thread as the run found it). Two streams that
 * leave their clients with the same states compare equal this way, whether they carried snapshots or patches.
 */
export function folded(frames: readonly SseFrame[], start?: ValuesState): SseFrame[] {
  let state = start;
  return frames.map((frame) => {
    if (frame.event !== "values") return frame;
    state = applyValuesFrame(state, frame.data as ValuesFrame);
    return { ...frame, data: state };
  });
}
