import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { emitCustomEvent } from "../src/index.js";

/** A one-node graph whose node emits what it is given, the way a tool or middleware would. */
function emittingGraph(payloads: Array<Record<string, unknown>>) {
  const State = Annotation.Root({ done: Annotation<boolean> });
  return new StateGraph(State)
    .addNode("work", async (_state: unknown, config: RunnableConfig) => {
      for (const payload of payloads) await emitCustomEvent(payload, config);
      return { done: true };
    })
    .addEdge(START, "work")
    .addEdge("work", END)
    .compile();
}

describe("emitCustomEvent", () => {
  it("delivers one typed event to the LangGraph stream writer and to LangChain callback listeners", async () => {
    const graph = emittingGraph([{ type: "task_started", task_id: "t1" }]);
    const heard: Array<[string, unknown]> = [];
    const written: unknown[] = [];
    const stream = await graph.stream(
      { done: false },
      {
        streamMode: "custom",
        callbacks: [{ handleCustomEvent: (name: string, data: unknown) => void heard.push([name, data]) }],
      },
    );
    for await (const chunk of stream) written.push(chunk);
    await awaitAllCallbacks();
    expect(written).toEqual([{ type: "task_started", task_id: "t1" }]);
    expect(heard).toEqual([["task_started", { type: "task_started", task_id: "t1" }]]);
  });

  it("reaches streamEvents consumers as on_custom_event named by the payload's type", async () => {
    const graph = emittingGraph([{ type: "progress", step: 2 }]);
    const custom: Array<{ name: string; data: unknown }> = [];
    for await (const event of graph.streamEvents({ done: false }, { version: "v2" })) {
      if (event.event === "on_custom_event") custom.push({ name: event.name, data: event.data });
    }
    expect(custom).toEqual([{ name: "progress", data: { type: "progress", step: 2 } }]);
  });

  it("sends a payload without a type to the stream writer only", async () => {
    const graph = emittingGraph([{ note: "untyped" }, { type: "typed" }]);
    const heard: string[] = [];
    const written: unknown[] = [];
    const stream = await graph.stream(
      { done: false },
      { streamMode: "custom", callbacks: [{ handleCustomEvent: (name: string) => void heard.push(name) }] },
    );
    for await (const chunk of stream) written.push(chunk);
    await awaitAllCallbacks();
    expect(written).toEqual([{ note: "untyped" }, { type: "typed" }]);
    expect(heard).toEqual(["typed"]);
  });
});
