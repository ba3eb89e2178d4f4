import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { reasoningToSendBack, withReasoningSentBack } from "../src/index.js";

const thought = (text: string, reasoning?: string, call?: string) =>
  new AIMessage({
    content: text,
    ...(reasoning === undefined ? {} : { additional_kwargs: { reasoning_content: reasoning } }),
    ...(call ? { tool_calls: [{ id: call, name: "t", args: {} }] } : {}),
  });

const thread = [
  new HumanMessage("q1"),
  thought("", "r1", "c1"),
  new ToolMessage({ content: "x", tool_call_id: "c1" }),
  thought("a1"),
  new HumanMessage("q2"),
  thought("a2", "r2"),
  new HumanMessage("q3"),
];

describe("reasoning sent back", () => {
  it("tool_turns: every AI message of a turn with a tool call gets its reasoning ('' when it has none); other turns none", () => {
    expect(reasoningToSendBack(thread, "tool_turns")).toEqual(["r1", "", undefined]);
  });

  it("all sends what each message has; none sends nothing", () => {
    expect(reasoningToSendBack(thread, "all")).toEqual(["r1", undefined, "r2"]);
    expect(reasoningToSendBack(thread, "none")).toEqual([undefined, undefined, undefined]);
  });

  it("puts the plan on the assistant messages of a request body in order, under the given field", () => {
    const wire = [
      { role: "user", content: "q1" },
      { role: "assistant", content: "", tool_calls: [] },
      { role: "tool", content: "x" },
      { role: "assistant", content: "a1" },
      { role: "user", content: "q2" },
    ];
    expect(withReasoningSentBack(wire, ["r1", undefined], "reasoning")).toEqual([
      wire[0],
      { role: "assistant", content: "", tool_calls: [], reasoning: "r1" },
      wire[2],
      wire[3],
      wire[4],
    ]);
  });

  it("leaves a body alone when its assistant messages do not match the plan", () => {
    const wire = [{ role: "assistant", content: "a" }];
    expect(withReasoningSentBack(wire, ["r1", "r2"], "reasoning_content")).toEqual(wire);
  });
});
