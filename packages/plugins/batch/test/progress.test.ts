import { describe, expect, it } from "vitest";
import { type BatchStatus, renderProgress } from "../src/index.js";

const status: BatchStatus = {
  id: "batch_1",
  ownerId: "alice",
  title: "t",
  subagentType: "general-purpose",
  state: "active",
  totalItems: 200,
  maxLiveItems: null,
  maxRunningItems: null,
  threadId: null,
  traceId: "trace",
  userRole: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  finishedAt: null,
  counts: { pending: 90, running: 10, completed: 95, failed: 3, cancelled: 0, timed_out: 2 },
  verdicts: { MET: 0, UNMET: 0, UNVERIFIED: 0, none: 100 },
  done: 100,
};

describe("renderProgress", () => {
  it("draws a half-filled bar with counts and rate on a terminal", () => {
    const line = renderProgress(status, { tty: true, elapsedMs: 10_000 });
    expect(line).toBe(
      `[${"█".repeat(15)}${"░".repeat(15)}]  50% 100/200 done · running 10 · pending 90 · failed 3 · timed_out 2 · cancelled 0  10.0 items/s`,
    );
  });

  it("writes a plain line without bar characters when stdout is not a terminal", () => {
    const line = renderProgress(status, { tty: false });
    expect(line).toBe("batch_1 active 50% 100/200 done · running 10 · pending 90 · failed 3 · timed_out 2 · cancelled 0");
    expect(line).not.toMatch(/[█░\r]/);
  });
});
