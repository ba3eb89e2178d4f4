import { createTestKernel, ScriptedChatModel, scriptedModelsPlugin } from "@antler/kernel/testing";
import { createAntlerAgent } from "@antler/plugin-runtime";
import sqlitePlugin from "@antler/plugin-storage-sqlite";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { TranscriptMessage } from "../src/extraction.js";
import { FactIndex, type MemoryConfigInput, MemoryService, memoryMiddleware, memorySectionSchema } from "../src/index.js";
import { tempDir } from "./helpers.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function memoryService(config: MemoryConfigInput, extractor = () => ({ text: '{"facts":[]}' })) {
  const dir = tempDir();
  const kernel = await createTestKernel({
    plugins: [sqlitePlugin, scriptedModelsPlugin({ extractor: { respond: extractor } })],
    config: { base_dir: dir.path, storage: { backend: "sqlite" }, models: [{ name: "extractor", provider: "scripted" }] },
    cwd: dir.path,
  });
  const service = new MemoryService({
    kernel,
    config: memorySectionSchema.parse({ model: "extractor", ...config }),
    logger: kernel.logger,
  });
  cleanups.push(
    () => dir.remove(),
    () => kernel.close(),
    () => service.close(),
  );
  return { service, kernel, dir: dir.path };
}

describe("memory middleware within a turn", () => {
  it("looks memory up once for all of a turn's model calls, injects it in each, and queues extraction from the final answer only", async () => {
    const { service, dir } = await memoryService({ debounce_ms: 600_000 });
    const scope = { userId: "bench", agentName: "" };
    await service.createFact(scope, { content: "Writes backend services in TypeScript", category: "preference", confidence: 0.9 });
    const lookups = vi.spyOn(service, "contextBlock");
    const queued: TranscriptMessage[][] = [];
    vi.spyOn(service, "queueExtraction").mockImplementation((_scope, _thread, transcript) => void queued.push(transcript));
    const model = new ScriptedChatModel((messages) =>
      ToolMessage.isInstance(messages.at(-1)) ? { text: "The answer is 3." } : { toolCalls: [{ name: "add", args: { a: 1, b: 2 } }] },
    );
    const add = tool(({ a, b }) => String(a + b), {
      name: "add",
      description: "Adds.",
      schema: z.object({ a: z.number(), b: z.number() }),
    });
    const { agent } = createAntlerAgent({
      model,
      tools: [add],
      baseDir: dir,
      extraMiddleware: [{ spec: memoryMiddleware(service), plugin: "@antler/plugin-memory" }],
    });
    await agent.invoke(
      { messages: [new HumanMessage("Which language for the typescript service?")] },
      { configurable: { thread_id: "t1" }, context: { thread_id: "t1", user_id: "bench" } },
    );
    expect(model.calls).toHaveLength(2);
    expect(lookups).toHaveBeenCalledTimes(1);
    for (const call of model.calls) {
      const texts = call.messages.map((m) => m.text);
      const at = texts.findIndex((t) => t.startsWith("<memory>"));
      expect(texts[at]).toContain("Writes backend services in TypeScript");
      expect(texts[at + 1]).toBe("Which language for the typescript service?");
    }
    expect(queued).toHaveLength(1);
    expect(queued[0]?.map((m) => [m.role, m.text])).toEqual([
      ["user", "Which language for the typescript service?"],
      ["assistant", "The answer is 3."],
    ]);
  });

  it("a turn queued while an extraction waits pushes it back to debounce_ms after that turn, then runs it once with the latest transcript", async () => {
    const prompts: string[] = [];
    const { service } = await memoryService({ debounce_ms: 600 }, () => ({ text: '{"facts":[]}' }));
    const scope = { userId: "u", agentName: "" };
    const extract = vi.spyOn(service as unknown as { extract: (key: string, job: unknown) => Promise<unknown> }, "extract");
    extract.mockImplementation(async (_key, job) => {
      prompts.push((job as { transcript: TranscriptMessage[] }).transcript.map((m) => m.text).join(" | "));
      return { added: 0, updated: 0, removed: 0 };
    });
    service.queueExtraction(scope, "t1", [{ id: "1", role: "user", text: "first" }]);
    await new Promise((r) => setTimeout(r, 400));
    service.queueExtraction(scope, "t1", [
      { id: "1", role: "user", text: "first" },
      { id: "2", role: "user", text: "second" },
    ]);
    // The first turn's wait (600 ms) is over; the second's is not.
    await new Promise((r) => setTimeout(r, 400));
    expect(prompts).toEqual([]);
    await vi.waitFor(() => expect(prompts).toEqual(["first | second"]), { timeout: 5_000, interval: 50 });
  });
});

describe("FactIndex search", () => {
  it("leaves nothing behind for the next search: each query ranks and scores as on a fresh index", () => {
    const facts = ["Runs marathons in spring", "Bakes sourdough on Sundays", "Ran the Lisbon marathon", "Walks the dog on Sundays"].map(
      (content, i) => ({
        id: `f${i}`,
        content,
        category: "context",
        confidence: 0.5 + i / 10,
        source: "test",
        created_at: "2026-01-01T00:00:00Z",
        updated_at: "2026-01-01T00:00:00Z",
      }),
    );
    const used = new FactIndex(1, facts);
    for (const query of ["marathon sundays", "sundays", "marathon", "lisbon sourdough"]) {
      expect(used.search(query, { limit: 4 })).toEqual(new FactIndex(1, facts).search(query, { limit: 4 }));
    }
  });
});
