import { diffValues, type ValuesState } from "@antler/plugin-gateway";
import { describe, expect, it } from "vitest";
import { valuesFrameKeys } from "../src/values-frame.js";

function state(extra: Record<string, unknown>): ValuesState {
  return { title: null, messages: [], artifacts: [], summary_text: null, todos: null, stop_reason: null, ...extra };
}

describe("the console reads the gateway's values delta frames", () => {
  it("takes every key from a snapshot, and from a patch only those that changed", () => {
    const first = state({ title: "Trip", todos: [{ content: "book", status: "pending" }] });
    expect(valuesFrameKeys({ snapshot: first })).toMatchObject({ title: "Trip", todos: [{ content: "book" }], artifacts: [] });

    // A new message only: nothing the page reads changed, so it keeps its title, todos and artifacts.
    const second = { ...first, messages: [{ type: "ai", id: "a", content: "hi" }] };
    expect(valuesFrameKeys({ patch: diffValues(first, second) })).toEqual({});

    const third = { ...second, todos: [{ content: "book", status: "completed" }], artifacts: ["/mnt/user-data/outputs/plan.md"] };
    expect(valuesFrameKeys({ patch: diffValues(second, third) })).toEqual({
      todos: [{ content: "book", status: "completed" }],
      artifacts: ["/mnt/user-data/outputs/plan.md"],
    });
  });
});
