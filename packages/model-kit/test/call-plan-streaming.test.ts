import { silentLogger } from "@antler/kernel";
import { scriptedModel } from "@antler/kernel/testing";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { describe, expect, it } from "vitest";
import { inProcessRateStore, ModelLimiter, withCallPlan } from "../src/index.js";

/** Streams `before` as text, then fails like a provider whose connection drops (HTTP 502 on the error). */
class DroppingModel extends BaseChatModel {
  calls = 0;
  constructor(private readonly before: string[]) {
    super({});
  }
  _llmType(): string {
    return "dropping";
  }
  async _generate(): Promise<ChatResult> {
    this.calls += 1;
    throw Object.assign(new Error("upstream closed"), { status: 502 });
  }
  override async *_streamResponseChunks(
    _messages: BaseMessage[],
    _options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    this.calls += 1;
    for (const text of this.before) {
      const chunk = new ChatGenerationChunk({ text, message: new AIMessageChunk({ content: text, id: "dropping-1" }) });
      yield chunk;
      await runManager?.handleLLMNewToken(text, undefined, undefined, undefined, undefined, { chunk });
    }
    throw Object.assign(new Error("upstream closed"), { status: 502 });
  }
}

function planned(primary: BaseChatModel, fallback: BaseChatModel) {
  const config = { name: "primary", provider: "test", supports_vision: false, supports_thinking: false, fallbacks: ["backup"] };
  return withCallPlan(primary, config as never, [{ name: "backup", model: fallback }], {
    name: "primary",
    where: "models[0]",
    logger: silentLogger(),
    limiter: new ModelLimiter(() => inProcessRateStore()),
  });
}

describe("call plan and streaming: a switch only before the first token", () => {
  it("stream(): a failure before any text moves to the fallback, and the consumer sees only the fallback's text", async () => {
    const primary = new DroppingModel([]);
    const backup = scriptedModel([{ text: "clean answer" }]);
    const chunks: AIMessageChunk[] = [];
    for await (const chunk of await planned(primary, backup).stream("hi")) chunks.push(chunk);
    expect(chunks.map((c) => c.text).join("")).toBe("clean answer");
    expect(backup.calls).toHaveLength(1);
  });

  it("stream(): once text has streamed, a failure is the call's error and the fallback is not asked", async () => {
    const primary = new DroppingModel(["Hel", "lo"]);
    const backup = scriptedModel([{ text: "never" }]);
    const seen: string[] = [];
    const error = await (async () => {
      for await (const chunk of await planned(primary, backup).stream("hi")) seen.push(chunk.text);
    })().catch((e: unknown) => e);
    expect(seen.join("")).toBe("Hello");
    expect((error as Error).message).toContain("upstream closed");
    expect(backup.calls).toHaveLength(0);
  });

  it("invoke() under a streaming consumer (LangGraph's messages mode): tokens already handed out make the failure final", async () => {
    const primary = new DroppingModel(["Partial"]);
    const backup = scriptedModel([{ text: "never" }]);
    const tokens: string[] = [];
    const consumer = BaseCallbackHandler.fromMethods({
      handleLLMNewToken(token: string) {
        tokens.push(token);
      },
    });
    Object.defineProperty(consumer, "lc_prefer_streaming", { value: true });
    const error = await planned(primary, backup)
      .invoke("hi", { callbacks: [consumer] })
      .catch((e: unknown) => e);
    expect(tokens).toContain("Partial");
    expect((error as Error).message).toContain("upstream closed");
    expect(backup.calls).toHaveLength(0);
  });

  it("invoke() without a streaming consumer: nothing reached anyone, so the fallback answers", async () => {
    const primary = new DroppingModel(["Partial"]);
    const backup = scriptedModel([{ text: "fallback answer" }]);
    const reply = await planned(primary, backup).invoke("hi");
    expect(reply.text).toBe("fallback answer");
    expect(primary.calls).toBe(1);
  });
});
