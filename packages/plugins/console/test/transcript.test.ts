import { diffValues, type ValuesState } from "@antler/plugin-gateway";
import { describe, expect, it } from "vitest";
import { applyFrame, IDLE_RUN, type ThreadView } from "../web/src/transcript.js";

const empty: ThreadView = { items: [], title: null, todos: [], artifacts: [] };

function state(extra: Record<string, unknown>): ValuesState {
  return { title: null, messages: [], artifacts: [], summary_text: null, todos: null, stop_reason: null, ...extra };
}

describe("the console reads the gateway's values delta frames", () => {
  it("takes title, todos and artifacts from a snapshot, then from the patches that change them, and keeps the rest", () => {
    const first = state({ title: "Trip", todos: [{ content: "book", status: "pending" }] });
    let { view } = applyFrame(empty, IDLE_RUN, "values", { snapshot: first });
    expect(view).toMatchObject({ title: "Trip", todos: [{ content: "book" }], artifacts: [] });

    const second = { ...first, messages: [{ type: "ai", id: "a", content: "hi" }] };
    ({ view } = applyFrame(view, IDLE_RUN, "values", { patch: diffValues(first, second) }));
    expect(view).toMatchObject({ title: "Trip", todos: [{ content: "book" }], artifacts: [] });

    const third = { ...second, todos: [{ content: "book", status: "completed" }], artifacts: ["/mnt/user-data/outputs/plan.md"] };
    ({ view } = applyFrame(view, IDLE_RUN, "values", { patch: diffValues(second, third) }));
    expect(view).toMatchObject({ title: "Trip", todos: [{ status: "completed" }], artifacts: ["/mnt/user-data/outputs/plan.md"] });
  });
});
