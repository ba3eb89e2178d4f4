import { describe, expect, it } from "vitest";
import { type CheckpointHead, inNormalizedRanges, MemoryMessageLog, normalizeRanges, planRetention } from "../src/index.js";

/** A chain of checkpoints: `shape` gives each one's source, oldest first; ids sort by age. */
function chain(shape: string[]): CheckpointHead[] {
  return shape.map((source, i) => ({
    ns: "",
    id: `cp-${String(i).padStart(3, "0")}`,
    parentId: i === 0 ? null : `cp-${String(i - 1).padStart(3, "0")}`,
    source,
    runId: undefined,
    writes: 1,
    bytes: 100,
  }));
}

const ids = (heads: readonly CheckpointHead[]) => heads.map((h) => h.id).sort();

describe("planRetention", () => {
  // Three turns: input, loop, loop each.
  const turns = chain(["input", "loop", "loop", "input", "loop", "loop", "input", "loop", "loop"]);

  it("keeps the newest `last` and the last checkpoint of every turn", () => {
    const plan = planRetention(turns, { last: 2, turns: true });
    expect(ids(plan.keep)).toEqual(["cp-002", "cp-005", "cp-007", "cp-008"]);
    expect(plan.drop).toHaveLength(5);
  });

  it("with turns off keeps only the newest `last`, and never fewer than the newest one", () => {
    expect(ids(planRetention(turns, { last: 2, turns: false }).keep)).toEqual(["cp-007", "cp-008"]);
    expect(ids(planRetention(turns, { last: 0, turns: false }).keep)).toEqual(["cp-008"]);
  });

  it("drops the pending writes of kept checkpoints that have a child, never of the newest", () => {
    const plan = planRetention(turns, { last: 2, turns: true });
    expect(ids(plan.clearWrites)).toEqual(["cp-002", "cp-005", "cp-007"]);
  });

  it("a change of run id between a checkpoint and its child also ends a turn", () => {
    const heads = chain(["loop", "loop", "loop"]).map((h, i) => ({ ...h, runId: i < 2 ? "run-a" : "run-b" }));
    expect(ids(planRetention(heads, { last: 1, turns: true }).keep)).toEqual(["cp-001", "cp-002"]);
  });

  it("keeps the end of a forked branch as a turn end", () => {
    const heads = [...chain(["input", "loop", "loop"]), { ...chain(["loop"])[0], id: "cp-100", parentId: "cp-000" } as CheckpointHead];
    expect(ids(planRetention(heads, { last: 1, turns: true }).keep)).toEqual(["cp-002", "cp-100"]);
  });
});

describe("message ranges and MemoryMessageLog.prune", () => {
  it("merges ranges given in any order", () => {
    expect(normalizeRanges([5, 7, 0, 2, 1, 3, 9, 9])).toEqual([0, 3, 5, 7]);
    const merged = normalizeRanges([5, 7, 0, 3]);
    expect([0, 2, 3, 4, 5, 6, 7].map((seq) => inNormalizedRanges(seq, merged))).toEqual([true, true, false, false, true, true, false]);
  });

  it("drops the rows in none of the ranges and answers how many", async () => {
    const log = new MemoryMessageLog();
    await log.append(
      "t",
      "",
      [0, 1, 2, 3, 4, 5].map((seq) => ({ seq, type: "json", data: `"m${seq}"` })),
    );
    expect(await log.prune("t", "", [4, 6, 0, 2])).toBe(2);
    expect((await log.read("t", "", [0, 10])).map((row) => row.seq)).toEqual([0, 1, 4, 5]);
    expect(await log.prune("other", "", [])).toBe(0);
  });
});
