// Reasoning and streamed tool call pieces in the run's `messages-tuple` events: each provider form of reasoning is
// read, and neither ever enters the text a consumer joins from `content`.
import { AIMessage, AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { messageReasoning, StreamTranslator } from "../src/client/events.js";

const fromModel = { langgraph_node: "model_request" };

describe("messageReasoning", () => {
  it("reads Anthropic thinking blocks, LangChain reasoning blocks, Responses summaries and reasoning_content", () => {
    const anthropic = new AIMessageChunk({
      content: [
        { type: "thinking", thinking: "Hmm, ", signature: "" },
        { type: "text", text: "Hi" },
      ],
    });
    const standard = new AIMessageChunk({ content: [{ type: "reasoning", reasoning: "Let me see." }] });
    const responses = new AIMessage({ content: [{ type: "reasoning", summary: [{ type: "summary_text", text: "Summed up." }] }] });
    const deepseek = new AIMessageChunk({ content: "", additional_kwargs: { reasoning_content: "Step one." } });
    expect(messageReasoning(anthropic)).toBe("Hmm, ");
    expect(messageReasoning(standard)).toBe("Let me see.");
    expect(messageReasoning(responses)).toBe("Summed up.");
    expect(messageReasoning(deepseek)).toBe("Step one.");
    expect(messageReasoning(new AIMessageChunk({ content: "plain" }))).toBe("");
  });
});

describe("StreamTranslator: reasoning and tool call pieces", () => {
  it("sends reasoning and tool call pieces apart from the text, and the whole tool call once from state", () => {
    const t = new StreamTranslator({ inputMessageId: "h1" });
    const chunks = [
      new AIMessageChunk({ id: "a1", content: [{ type: "thinking", thinking: "Think " }] }),
      new AIMessageChunk({ id: "a1", content: "", additional_kwargs: { reasoning_content: "more." } }),
      new AIMessageChunk({ id: "a1", content: "Calling." }),
      new AIMessageChunk({
        id: "a1",
        content: "",
        tool_call_chunks: [{ type: "tool_call_chunk", id: "c1", name: "ls", args: '{"pa', index: 0 }],
      }),
      new AIMessageChunk({ id: "a1", content: "", tool_call_chunks: [{ type: "tool_call_chunk", args: 'th":"/"}', index: 0 }] }),
    ];
    const streamed = chunks.flatMap((chunk) => t.translate("messages", [chunk, fromModel]));
    const final = new AIMessage({
      id: "a1",
      content: [
        { type: "thinking", thinking: "Think more." },
        { type: "text", text: "Calling." },
      ],
      tool_calls: [{ id: "c1", name: "ls", args: { path: "/" } }],
    });
    const fromState = t.translate("values", { messages: [new HumanMessage({ id: "h1", content: "go" }), final] });
    const tuples = [...streamed, ...fromState].flatMap((e) => (e.type === "messages-tuple" ? [e.data] : []));
    expect(tuples).toEqual([
      { type: "ai", id: "a1", content: "", reasoning: "Think " },
      { type: "ai", id: "a1", content: "", reasoning: "more." },
      { type: "ai", id: "a1", content: "Calling." },
      { type: "ai", id: "a1", content: "", tool_call_chunks: [{ index: 0, id: "c1", name: "ls", args: '{"pa' }] },
      { type: "ai", id: "a1", content: "", tool_call_chunks: [{ index: 0, args: 'th":"/"}' }] },
      { type: "ai", id: "a1", content: "", tool_calls: [{ id: "c1", name: "ls", args: { path: "/" } }] },
    ]);
    expect(t.finalText).toBe("Calling.");
  });

  it("sends a message that did not stream with its reasoning first, once", () => {
    const t = new StreamTranslator({ inputMessageId: "h1" });
    const answer = new AIMessage({ id: "a1", content: "Done.", additional_kwargs: { reasoning_content: "Quick thought." } });
    const messages = [new HumanMessage({ id: "h1", content: "go" }), answer];
    const events = [...t.translate("values", { messages }), ...t.translate("values", { messages: [...messages] })];
    expect(events.flatMap((e) => (e.type === "messages-tuple" ? [e.data] : []))).toEqual([
      { type: "ai", id: "a1", content: "", reasoning: "Quick thought." },
      { type: "ai", id: "a1", content: "Done." },
    ]);
  });
});
