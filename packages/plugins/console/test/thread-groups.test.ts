import { describe, expect, it } from "vitest";
import { groupThreadsByDate } from "../src/thread-groups.js";

const at = (y: number, m: number, d: number, h = 12) => ({ updated_at: new Date(y, m - 1, d, h).toISOString() });

describe("the thread list's date groups", () => {
  const now = new Date(2026, 2, 15, 0, 30); // 15 March 2026, just after local midnight

  it("groups by local calendar day, then by month, in the list's order", () => {
    const threads = [
      at(2026, 3, 15, 0), // today, 30 minutes ago
      at(2026, 3, 14, 23), // yesterday, though under an hour ago
      at(2026, 3, 13),
      at(2026, 3, 8), // 7 days before today: still the week
      at(2026, 3, 7), // 8 days: the 30 days
      at(2026, 2, 13), // 30 days
      at(2026, 2, 12), // 31 days: February, by month
      at(2026, 2, 1),
      at(2026, 1, 31),
      at(2025, 3, 20),
    ];
    const groups = groupThreadsByDate(threads, now);
    expect(groups.map((g) => [g.key, g.threads.length])).toEqual([
      ["today", 1],
      ["yesterday", 1],
      ["week", 2],
      ["month30", 2],
      ["2026-02", 2],
      ["2026-01", 1],
      ["2025-03", 1],
    ]);
    expect(groups[4]?.month?.getMonth()).toBe(1);
    expect(groups.flatMap((g) => g.threads)).toEqual(threads);
  });

  it("counts a date later than now (another clock) as today", () => {
    expect(groupThreadsByDate([at(2026, 3, 16)], now).map((g) => g.kind)).toEqual(["today"]);
  });
});
