import { AntlerError, ErrorCodes, ensureTraceContext, isAntlerError } from "@antler/kernel";
import { scriptedModel } from "@antler/kernel/testing";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { providerErrorStatus, toModelCallError, withModelErrorContext } from "../src/index.js";

const weather = tool(async ({ city }: { city: string }) => `sunny in ${city}`, {
  name: "get_weather",
  description: "Current weather for a city.",
  schema: z.object({ city: z.string() }),
});

describe("withModelErrorContext", () => {
  it("turns a failed call into MODEL_CALL_FAILED naming the model and the trace id, keeping the cause", async () => {
    const cause = new Error("upstream exploded");
    const model = withModelErrorContext(scriptedModel([{ error: cause }]), "fast");
    const error = await ensureTraceContext("trace-abc", () => model.invoke("hi")).catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    expect((error as Error).message).toContain('model "fast"');
    expect((error as Error).message).toContain("trace-abc");
    expect((error as Error).cause).toBe(cause);
  });

  it("wraps failures while streaming too", async () => {
    const model = withModelErrorContext(scriptedModel([{ error: "stream broke" }]), "fast");
    const error = await ensureTraceContext("trace-stream", async () => {
      for await (const _ of await model.stream("hi")) {
        // draining the stream is what makes the call
      }
    }).catch((e: unknown) => e);
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    expect((error as Error).message).toContain("trace-stream");
  });

  it("still binds tools and works inside createAgent", async () => {
    const inner = scriptedModel([{ toolCalls: [{ name: "get_weather", args: { city: "Rome" } }] }, { text: "Done." }]);
    const agent = createAgent({ model: withModelErrorContext(inner, "fast"), tools: [weather] });
    const result = await agent.invoke({ messages: [new HumanMessage("Rome?")] });
    expect(result.messages.at(-1)?.text).toBe("Done.");
    expect(inner.calls[0]?.tools).toEqual(["get_weather"]);
  });

  it("lets a cancellation through unchanged", async () => {
    const model = withModelErrorContext(scriptedModel([{ text: "never", delayMs: 10_000 }]), "fast");
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const error = await model.invoke("wait", { signal: controller.signal }).catch((e: unknown) => e);
    expect(isAntlerError(error)).toBe(false);
    expect((error as Error).name).toBe("AbortError");
  });

  it("passes scripted AI messages through unchanged on success", async () => {
    const model = withModelErrorContext(scriptedModel([{ text: "fine", id: "given-id" }]), "fast");
    const reply = await model.invoke([new HumanMessage("hi"), new AIMessage("earlier")]);
    expect(reply.id).toBe("given-id");
    expect(reply.text).toBe("fine");
  });
});

describe("toModelCallError", () => {
  it("puts the provider's HTTP status in the message, the details and the hint, with the configured where", () => {
    const cause = Object.assign(new Error("rate limited"), { status: 429 });
    const error = ensureTraceContext("trace-429", () =>
      toModelCallError(cause, "fast", { where: "models[1]", hint: (_e, status) => `status was ${status}` }),
    );
    expect(isAntlerError(error, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    const antler = error as AntlerError;
    expect(antler.message).toContain('model "fast" call failed (HTTP 429): rate limited [trace trace-429]');
    expect(antler.where).toBe("models[1]");
    expect(antler.hint).toBe("status was 429");
    expect(antler.details).toEqual({ model: "fast", traceId: "trace-429", status: 429 });
  });

  it("returns an error that already is an AntlerError unchanged", () => {
    const original = new AntlerError(ErrorCodes.CONFIG_INVALID, "bad config");
    expect(toModelCallError(original, "fast")).toBe(original);
  });
});

describe("providerErrorStatus", () => {
  it("reads a numeric status and ignores anything else", () => {
    expect(providerErrorStatus({ status: 503 })).toBe(503);
    expect(providerErrorStatus({ status: "503" })).toBeUndefined();
    expect(providerErrorStatus(null)).toBeUndefined();
  });
});
