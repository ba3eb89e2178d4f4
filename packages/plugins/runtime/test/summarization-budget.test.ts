import { type ScriptFunction, scriptedModelsPlugin } from "@antler/kernel/testing";
import { type BaseMessage, SystemMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { summarizationBudget } from "../src/config.js";
import { AntlerClient } from "../src/index.js";
import { approximateTokenCount, SUMMARY_TAG } from "../src/middleware/summarization.js";
import { seedThreadMessages } from "./fixtures/seed-thread.js";
import { tempDir } from "./fixtures.js";

interface Call {
  kind: "agent" | "summarizer" | "title";
  /** Approximate tokens of everything sent: the system prompt (with any summary) and the messages. */
  tokens: number;
  /** ... of the system prompt alone, before any summary block. */
  systemTokens: number;
  messages: number;
  /** The text of the first message after the system prompt. */
  first: string;
}

/** A scripted model that answers in one line and records the size of every prompt it is sent. */
function recordingModel(calls: Call[]): ScriptFunction {
  return (messages: BaseMessage[]) => {
    const system = messages.find((m) => SystemMessage.isInstance(m))?.text ?? "";
    const kind = system.startsWith("You compress") ? "summarizer" : system.startsWith("Write a title") ? "title" : "agent";
    const bare = system.split(`<${SUMMARY_TAG}>`)[0] ?? "";
    calls.push({
      kind,
      tokens: approximateTokenCount(messages),
      systemTokens: approximateTokenCount([new SystemMessage(bare)]),
      messages: messages.length,
      first: messages.find((m) => !SystemMessage.isInstance(m))?.text ?? "",
    });
    if (kind === "summarizer") return { text: `Summary: the user asked about many items; all were fine. ${"detail ".repeat(40)}` };
    return { text: "Noted: that item is fine too, for the same reasons as the others." };
  };
}

async function clientWithWindow(calls: Call[], contextWindow: number | undefined) {
  const dir = tempDir();
  return AntlerClient.create({
    config: {
      base_dir: dir,
      models: [{ name: "m", provider: "scripted", ...(contextWindow === undefined ? {} : { context_window: contextWindow }) }],
      storage: { backend: "sqlite" },
      logging: { level: "error" },
    },
    plugins: [scriptedModelsPlugin({ m: recordingModel(calls) })],
    cwd: dir,
    env: {},
    discover: false,
  });
}

describe("summarization keeps the prompt inside the model's context window by default", () => {
  it("with models[].context_window set: every prompt of a 1,000-message thread stays under 70% of the window, and the thread keeps every message", async () => {
    const calls: Call[] = [];
    const window = 8000;
    const client = await clientWithWindow(calls, window);
    try {
      await client.createThread({ threadId: "long", userId: "ann" });
      await seedThreadMessages(client, "ann", "long", 1000);
      const turns = 24;
      for (let turn = 0; turn < turns; turn++) {
        await client.chat(`Question ${turn}: and what about item ${turn} of the new batch? ${"Some context. ".repeat(70)}`, {
          threadId: "long",
          userId: "ann",
        });
      }
      const agentCalls = calls.filter((c) => c.kind === "agent");
      const summaries = calls.filter((c) => c.kind === "summarizer");
      expect(agentCalls).toHaveLength(turns);
      if (process.env.ANTLER_REPORT) console.info(JSON.stringify(calls));
      // The trigger is 70% of the window (5,600 tokens) for the summary and the messages, checked before each call;
      // the system prompt comes on top. The seeded messages alone are about 22,000 tokens.
      for (const call of agentCalls) expect(call.tokens - call.systemTokens).toBeLessThanOrEqual(0.7 * window);
      expect(agentCalls.every((c) => c.messages < 100)).toBe(true);
      // Every request, across summaries, still opens with the thread's first question (the task).
      for (const call of agentCalls) expect(call.first).toMatch(/^Seeded question 0:/);
      // One summary on the first turn, then one every few turns: each leaves the tail well under the trigger.
      expect(summaries.length).toBeGreaterThanOrEqual(2);
      expect(summaries.length).toBeLessThan(turns / 4);
      // The full history stays readable: nothing was removed from the thread.
      const thread = await client.getThread("long", { userId: "ann" });
      expect(thread.messages).toHaveLength(1000 + 2 * turns);
      expect(thread.messages[1]?.content).toContain("Seeded answer 1");
      expect(thread.summary_text).toContain("Summary:");
    } finally {
      await client.close();
    }
  });

  it("a model without a known window is not summarized unless summarization is switched on", async () => {
    const calls: Call[] = [];
    const client = await clientWithWindow(calls, undefined);
    try {
      await client.createThread({ threadId: "long", userId: "ann" });
      await seedThreadMessages(client, "ann", "long", 200);
      await client.chat("One more?", { threadId: "long", userId: "ann" });
      expect(calls.filter((c) => c.kind === "summarizer")).toHaveLength(0);
      expect(calls.find((c) => c.kind === "agent")?.messages).toBeGreaterThan(200);
    } finally {
      await client.close();
    }
  });

  it("derives the trigger from the window (window_fraction), lets trigger_tokens win, and stays off when disabled", () => {
    const section = { enabled: "auto" as const, window_fraction: 0.7 };
    expect(summarizationBudget(section, 128_000)).toEqual({ triggerTokens: 89_600, targetTokens: undefined });
    expect(summarizationBudget(section, undefined)).toBeNull();
    expect(summarizationBudget({ ...section, trigger_tokens: 5000 }, 128_000)?.triggerTokens).toBe(5000);
    expect(summarizationBudget({ ...section, enabled: true }, undefined)?.triggerTokens).toBe(12_000);
    expect(summarizationBudget({ ...section, enabled: false }, 128_000)).toBeNull();
    expect(SUMMARY_TAG).toBe("conversation_summary");
  });
});
