import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { DeltaCheckpointSaver, isMessagesRef, type MessagesRef } from "../delta-saver.js";
import { checkScriptedThread, runWriter, type WriterRun } from "./crash.js";

/** Kill points a backend's writer script may offer beyond the generic `after-log-append` and `after-checkpoint-write`. */
export type BackendCrashPoint = "mid-checkpoint-write" | "mid-log-append";

export interface CheckpointCrashSuiteOptions {
  /**
   * The writer script, run as `node <script> ...args(threadId, turns)`: it opens the backend's checkpointer from the
   * built packages, honours `ANTLER_TEST_CRASH_AT=<point>:<n>` (`killAt` for the generic points, its own hooks for
   * `points`), prints `ready`, and calls `writeScriptedTurns` printing `ack <length> <checkpoint id>` lines.
   */
  script: string;
  args: (threadId: string, turns: number | "forever") => string[];
  /** A fresh checkpointer on the same storage, as a restarted process opens it (closed by the suite). */
  open: () => Promise<{ saver: BaseCheckpointSaver; close: () => Promise<void> }>;
  /** The backend-specific kill points the script supports. */
  points?: readonly BackendCrashPoint[];
  /** Rounds of kills at random moments; default 10. */
  rounds?: number;
  /** Seed of the random kill delays (printed on failure); default a fixed one. */
  seed?: number;
}

interface PointCase {
  point: string;
  title: string;
  /** Rows the killed turn leaves that no checkpoint names. */
  orphans: number;
  /** Whether the killed turn's checkpoint is in the thread afterwards (stored but never acknowledged). */
  kept: boolean;
}

const CASES: Record<string, PointCase> = {
  "after-log-append": {
    point: "after-log-append",
    title: "after the turn's message rows are stored and before its checkpoint is written",
    orphans: 2,
    kept: false,
  },
  "mid-log-append": {
    point: "mid-log-append",
    title: "in the middle of storing the turn's message rows",
    orphans: 0,
    kept: false,
  },
  "mid-checkpoint-write": {
    point: "mid-checkpoint-write",
    title: "in the middle of writing the checkpoint, before it commits",
    orphans: 2,
    kept: false,
  },
  "after-checkpoint-write": {
    point: "after-checkpoint-write",
    title: "after the checkpoint is stored and before it is acknowledged",
    orphans: 0,
    kept: true,
  },
};

/**
 * Kill -9 at the process boundary: a child process writing turns to a thread through a `DeltaCheckpointSaver` is
 * killed at each write point, then at random moments, and after each kill a fresh checkpointer must read the thread
 * back consistent (no acknowledged message lost, none twice, every acknowledged checkpoint whole), and the next
 * process must go on writing it, numbering past rows that the killed turn left behind.
 */
export function runCheckpointCrashSuite(name: string, options: CheckpointCrashSuiteOptions): void {
  const points = ["after-log-append", ...(options.points ?? []), "after-checkpoint-write"];

  async function check(threadId: string, acked: ReadonlyMap<string, number>) {
    const { saver, close } = await options.open();
    try {
      const result = await checkScriptedThread(saver, threadId, acked);
      expect(result.problems, `thread ${threadId} after a kill`).toEqual([]);
      const delta = saver instanceof DeltaCheckpointSaver ? saver : undefined;
      if (!delta) throw new Error(`${name}: open() must give a DeltaCheckpointSaver`);
      const raw = (await delta.inner.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "" } }))?.checkpoint.channel_values
        .messages;
      return {
        length: result.length,
        lastSeq: await delta.log.lastSeq(threadId, ""),
        ref: isMessagesRef(raw) ? (raw as MessagesRef) : undefined,
      };
    } finally {
      await close();
    }
  }

  async function write(threadId: string, turns: number | "forever", env: Record<string, string> = {}, killAfterMs?: number) {
    const run = await runWriter(options.script, options.args(threadId, turns), {
      env,
      ...(killAfterMs === undefined ? {} : { killAfterMs }),
    });
    if (run.signal !== "SIGKILL" && run.code !== 0) throw new Error(`writer failed (${run.code}): ${run.stderr}`);
    return run;
  }

  function merge(into: Map<string, number>, run: WriterRun): void {
    for (const [id, length] of run.acked) into.set(id, length);
  }

  describe(`checkpoint crash safety: ${name}`, () => {
    for (const point of points) {
      const c = CASES[point] as PointCase;
      it(`reads back a consistent thread after a kill -9 ${c.title}, and the next turn goes on`, async () => {
        const threadId = `crash-${point}-${Date.now().toString(36)}`;
        const acked = new Map<string, number>();
        merge(acked, await write(threadId, 2));
        // The second turn of this process dies at the point; the first is acknowledged.
        const killed = await write(threadId, "forever", { ANTLER_TEST_CRASH_AT: `${point}:2` });
        expect(killed.signal, killed.stderr).toBe("SIGKILL");
        expect([...killed.acked.values()]).toEqual([6]);
        merge(acked, killed);
        const after = await check(threadId, acked);
        expect(after.length).toBe(c.kept ? 8 : 6);
        expect(after.lastSeq).toBe(after.length - 1 + c.orphans);

        const next = await write(threadId, 1);
        expect(next.code).toBe(0);
        merge(acked, next);
        const resumed = await check(threadId, acked);
        expect(resumed.length).toBe(after.length + 2);
        // The new turn's rows are numbered past whatever the killed one left.
        const gap = c.orphans > 0 ? [0, after.length, after.length + c.orphans, after.length + c.orphans + 2] : [0, after.length + 2];
        expect(resumed.ref?.r).toEqual(gap);
      });
    }

    it("reads back a consistent thread after each of many kill -9s at random moments", async () => {
      const threadId = `crash-random-${Date.now().toString(36)}`;
      const random = mulberry32(options.seed ?? 0x5eed);
      const acked = new Map<string, number>();
      let length = 0;
      for (let round = 0; round < (options.rounds ?? 10); round++) {
        const delay = 5 + Math.floor(random() * 250);
        const run = await write(threadId, "forever", {}, delay);
        expect(run.signal, `round ${round} (kill after ${delay} ms): ${run.stderr}`).toBe("SIGKILL");
        merge(acked, run);
        const after = await check(threadId, acked);
        expect(after.length, `round ${round}`).toBeGreaterThanOrEqual(length);
        length = after.length;
      }
      expect(length).toBeGreaterThan(0);
      const last = await write(threadId, 2);
      merge(acked, last);
      expect((await check(threadId, acked)).length).toBe(length + 4);
    });
  });
}

/** A small seeded generator, so a failing round can be replayed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
