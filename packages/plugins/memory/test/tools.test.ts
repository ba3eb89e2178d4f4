import type { ScriptedStep } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness, tempDir } from "./helpers.js";

let dir: ReturnType<typeof tempDir>;
let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
  dir?.remove();
});

describe("memory.mode: tool", () => {
  it("offers memory_search/add/update/delete instead of injection and extraction, scoped to the run's user, with secrets redacted on add", async () => {
    dir = tempDir();
    let factId = "";
    const steps: Record<number, ScriptedStep> = {
      0: {
        toolCalls: [
          { name: "memory_add", args: { content: "Deploys with token ghp_abcdefghijklmnopqrstuvwxyz0123456789", category: "knowledge" } },
        ],
      },
      1: { toolCalls: [{ name: "memory_search", args: { query: "deploys" } }] },
      2: { text: "Noted." },
    };
    h = await harness({
      baseDir: dir.path,
      memory: { mode: "tool", debounce_ms: 0 },
      chat: (_messages, i) => {
        if (i === 3)
          return { toolCalls: [{ name: "memory_update", args: { fact_id: factId, content: "Deploys on Fridays", confidence: 0.95 } }] };
        if (i === 4) return { toolCalls: [{ name: "memory_delete", args: { fact_id: factId } }] };
        if (i === 5) return { toolCalls: [{ name: "memory_delete", args: { fact_id: "fact_of_someone_else" } }] };
        return steps[i] ?? { text: "Done." };
      },
    });
    await h.client.chat("Remember how I deploy.", { threadId: "t1" });
    const calls = h.chat().calls;
    expect(calls[0]?.tools).toEqual(expect.arrayContaining(["memory_add", "memory_delete", "memory_search", "memory_update"]));
    const stored = (await h.memory.getMemory()).facts;
    expect(stored).toHaveLength(1);
    expect(stored[0]?.content).toBe("Deploys with token [REDACTED]");
    expect(stored[0]?.source).toBe("tool:thread:t1");
    factId = stored[0]?.id as string;
    const searched = calls[2]?.messages.at(-1)?.text ?? "";
    expect(searched).toContain(factId);
    expect(searched).not.toContain("ghp_");
    // Tool mode: no injected memory block, and nothing queued for extraction.
    expect(calls.flatMap((c) => c.messages.map((m) => m.text)).some((t) => t.startsWith("<memory>"))).toBe(false);
    expect((await h.memory.getMemoryStatus()).pending_extractions).toBe(0);

    await h.client.chat("Actually I deploy on Fridays; then forget it.", { threadId: "t1" });
    expect(h.extractor()).toBeUndefined();
    const after = h.chat().calls;
    expect(after[4]?.messages.at(-1)?.text).toContain("Deploys on Fridays");
    expect(after[5]?.messages.at(-1)?.text).toContain('"deleted":true');
    // Another (or a made-up) id is "not found" for this user: the model gets an error result, nothing else changes.
    expect(after[6]?.messages.at(-1)?.text).toMatch(/no memory fact "fact_of_someone_else"/);
    expect((await h.memory.getMemory()).facts).toEqual([]);
  });
});
