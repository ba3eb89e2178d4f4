import { describe, expect, it } from "vitest";
import { complementRanges, MemoryMessageLog, normalizeRanges } from "../src/index.js";
import { runMessageLogConformance } from "../src/testing/index.js";

runMessageLogConformance("MemoryMessageLog", async () => new MemoryMessageLog());

describe("message log ranges", () => {
  it("normalizes ranges: sorted, overlapping and touching ones merged, empty ones dropped", () => {
    expect(normalizeRanges([5, 7, 0, 2, 1, 3])).toEqual([0, 3, 5, 7]);
    expect(normalizeRanges([4, 6, 2, 4, 9, 9, 8, 7])).toEqual([2, 6]);
    expect(normalizeRanges([])).toEqual([]);
  });

  it("complements kept ranges into the gaps prune drops, open at both ends", () => {
    const MIN = Number.MIN_SAFE_INTEGER;
    const MAX = Number.MAX_SAFE_INTEGER;
    expect(complementRanges([])).toEqual([MIN, MAX]);
    expect(complementRanges([5, 7, 0, 2])).toEqual([MIN, 0, 2, 5, 7, MAX]);
    expect(complementRanges([MIN, 3])).toEqual([3, MAX]);
  });
});
