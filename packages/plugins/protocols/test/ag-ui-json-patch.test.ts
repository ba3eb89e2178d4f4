// The state deltas AG-UI sends are RFC 6902 patches made by diffJsonPatch; AG-UI's own client applies them (here
// through its compactEvents, which folds a snapshot and its deltas with the same validating applier HttpAgent uses).
import { type BaseEvent, compactEvents, EventType } from "@ag-ui/client";
import { describe, expect, it, vi } from "vitest";
import { diffJsonPatch } from "../src/index.js";

function applied(before: unknown, after: unknown): unknown {
  const events = [
    { type: EventType.STATE_SNAPSHOT, snapshot: before },
    { type: EventType.STATE_DELTA, delta: diffJsonPatch(before, after) },
  ] as BaseEvent[];
  const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
  try {
    const [snapshot] = compactEvents(events) as Array<BaseEvent & { snapshot: unknown }>;
    // A patch the applier refuses is only a warning there: none may be raised.
    expect(warn).not.toHaveBeenCalled();
    return snapshot?.snapshot;
  } finally {
    warn.mockRestore();
  }
}

describe("diffJsonPatch", () => {
  it("writes no operation for equal documents", () => {
    expect(diffJsonPatch({ todos: [{ a: 1 }], title: "t" }, { todos: [{ a: 1 }], title: "t" })).toEqual([]);
  });

  it("changes one field of one list item in place", () => {
    const before = { todos: [{ content: "a", status: "pending" }], title: null };
    const after = { todos: [{ content: "a", status: "completed" }], title: null };
    expect(diffJsonPatch(before, after)).toEqual([{ op: "replace", path: "/todos/0/status", value: "completed" }]);
    expect(applied(before, after)).toEqual(after);
  });

  it("patches documents the client applies to exactly the new value", () => {
    const cases: Array<[unknown, unknown]> = [
      [{ todos: [1, 2, 3, 4] }, { todos: [1] }],
      [
        { todos: [] },
        {
          todos: [
            { content: "x", status: "pending" },
            { content: "y", status: "pending" },
          ],
        },
      ],
      [
        { title: null, artifacts: [] },
        { title: "A title", artifacts: ["/mnt/user-data/outputs/a.md"] },
      ],
      [
        { "a/b": 1, "c~d": { x: [1, [2, 3]] } },
        { "a/b": 2, "c~d": { x: [1, [2]], y: true } },
      ],
      [
        { gone: 1, kept: { deep: "x" } },
        { kept: { deep: "y" }, added: null },
      ],
      [{ todos: [1, 2] }, { todos: { not: "a list" } }],
    ];
    for (const [before, after] of cases) expect(applied(before, after)).toEqual(after);
  });
});
