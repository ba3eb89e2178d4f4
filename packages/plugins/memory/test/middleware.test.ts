import { getCurrentTraceId } from "@antler/kernel";
import { SystemMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { extractionReply, type Harness, harness, tempDir, waitFor } from "./helpers.js";

let dir: ReturnType<typeof tempDir>;
let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
  dir?.remove();
});

const THREE_TURNS = [
  "I do all my backend work in TypeScript these days.",
  "My dog Biscuit needs a walk at six every evening.",
  "Thanks, that is all for now.",
];

function memoryMessages(call: { messages: Array<{ text: string }> }): string[] {
  return call.messages.map((m) => m.text).filter((t) => t.startsWith("<memory>"));
}

describe("memory.mode: middleware", () => {
  it("three quick turns cost one debounced extraction; the fourth turn's request carries the relevant fact and not the irrelevant one, with the system prompt unchanged", async () => {
    dir = tempDir();
    h = await harness({
      baseDir: dir.path,
      memory: { debounce_ms: 400 },
      extractor: () => ({
        text: extractionReply(
          [
            { content: "Writes backend services in TypeScript", category: "preference" },
            { content: "Has a dog named Biscuit who is walked at six", category: "context" },
          ],
          { work_context: "Backend engineer" },
        ),
      }),
    });
    for (const message of THREE_TURNS) await h.client.chat(message, { threadId: "t1" });
    const facts = await waitFor(
      async () => {
        const m = await h?.memory.getMemory();
        return m && m.facts.length === 2 ? m.facts : undefined;
      },
      15_000,
      "the extracted facts",
    );
    expect(facts.map((f) => f.content).sort()).toEqual([
      "Has a dog named Biscuit who is walked at six",
      "Writes backend services in TypeScript",
    ]);
    expect(facts.every((f) => f.source === "thread:t1")).toBe(true);
    // Past another debounce window: still one extraction, and it read all three turns.
    await new Promise((r) => setTimeout(r, 600));
    const extractor = h.extractor();
    expect(extractor?.calls).toHaveLength(1);
    const prompt = extractor?.calls[0]?.messages.at(-1)?.text ?? "";
    for (const message of THREE_TURNS) expect(prompt).toContain(message);

    await h.client.chat("Which language should the new backend service use?", { threadId: "t2" });
    const calls = h.chat().calls;
    const fourth = calls.at(-1);
    if (!fourth) throw new Error("no model call");
    const injected = memoryMessages(fourth);
    expect(injected).toHaveLength(1);
    expect(injected[0]).toContain("Writes backend services in TypeScript");
    expect(injected[0]).toContain("Work: Backend engineer");
    expect(injected[0]).not.toContain("Biscuit");
    // The memory block sits just before the user's message, after the static system prompt, which is byte-identical.
    const texts = fourth.messages.map((m) => m.text);
    expect(texts.indexOf(injected[0] as string)).toBe(texts.length - 2);
    const first = calls[0];
    if (!first) throw new Error("no first call");
    expect(SystemMessage.isInstance(fourth.messages[0])).toBe(true);
    expect(fourth.messages[0]?.text).toBe(first.messages[0]?.text);
    // The injection is per request, never written to the thread.
    const thread = await h.client.getThread("t2");
    expect(thread.messages.some((m) => m.content.includes("<memory>"))).toBe(false);
  });

  it("does not wait for the extraction inside the turn, and kernel close flushes a queued extraction instead of losing it", async () => {
    dir = tempDir();
    h = await harness({
      baseDir: dir.path,
      // Longer than the test: only close() can make it run.
      memory: { debounce_ms: 600_000 },
      extractor: () => ({ text: extractionReply([{ content: "Lives in Lisbon" }]), delayMs: 1500 }),
    });
    const started = Date.now();
    await h.client.chat("I moved to Lisbon last year.", { threadId: "t1" });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(h.extractor()?.calls ?? []).toHaveLength(0);
    expect((await h.memory.getMemoryStatus()).pending_extractions).toBe(1);
    await h.close();
    h = await harness({ baseDir: dir.path });
    expect((await h.memory.getMemory()).facts.map((f) => f.content)).toEqual(["Lives in Lisbon"]);
  });

  it("an extraction queued outside any trace scope runs under a trace id of its own, and its log line carries that id", async () => {
    dir = tempDir();
    const ambient: Array<string | null> = [];
    const extractor = () => {
      ambient.push(getCurrentTraceId());
      return { text: "not json at all" };
    };
    h = await harness({ baseDir: dir.path, memory: { debounce_ms: 0 }, extractor });
    // Queued the way a host would from a background job: no request, no run, no ambient trace id.
    h.service.queueExtraction({ userId: "alice", agentName: "" }, "t-bg", [{ id: "1", role: "user", text: "I live in Porto." }]);
    await h.service.flush();
    const malformed = h.logs.find((l) => String(l.msg).includes("malformed"));
    expect(malformed).toBeDefined();
    expect(typeof malformed?.trace_id).toBe("string");
    expect(String(malformed?.trace_id)).toMatch(/^[0-9a-f]{32}$/);
    // The extraction model was called inside that id's scope, so provider requests carry it too.
    expect(ambient).toEqual([malformed?.trace_id]);
  });

  it("logs a malformed extraction reply with the trace id, changes nothing, and extracts those messages with the next turn", async () => {
    dir = tempDir();
    let reply = "Sure! Here are the facts: the user likes tea.";
    h = await harness({ baseDir: dir.path, memory: { debounce_ms: 0 }, extractor: () => ({ text: reply }) });
    await h.memory.createFact({ content: "Drinks coffee in the morning", category: "preference" });
    const before = await h.memory.getMemory();
    const events: Array<{ type: string; data: unknown }> = [];
    for await (const event of h.client.stream("I prefer green tea now.", { threadId: "t1" })) events.push(event as never);
    await h.service.flush();
    const logged = h.logs.find((l) => String(l.msg).includes("malformed"));
    expect(logged).toBeDefined();
    const runs = await h.client.listRuns("t1");
    expect(logged?.trace_id).toBe(runs[0]?.trace_id);
    expect(await h.memory.getMemory()).toEqual(before);

    reply = JSON.stringify({
      add: [{ content: "Prefers green tea", category: "preference", confidence: 0.9 }],
      profile: { work_context: 42 },
    });
    await h.client.chat("And oolong on weekends.", { threadId: "t1" });
    await h.service.flush();
    // A wrong type anywhere refuses the whole reply.
    expect(await h.memory.getMemory()).toEqual(before);

    reply = extractionReply([{ content: "Prefers green tea", category: "preference" }]);
    await h.client.chat("Back to work.", { threadId: "t1" });
    await h.service.flush();
    const calls = h.extractor()?.calls ?? [];
    expect(calls).toHaveLength(3);
    // The refused replies did not move the thread's cursor: the third extraction still reads the first message.
    expect(calls[2]?.messages.at(-1)?.text).toContain("I prefer green tea now.");
    expect((await h.memory.getMemory()).facts.map((f) => f.content).sort()).toEqual(["Drinks coffee in the morning", "Prefers green tea"]);
  });

  it("redacts secret-looking values in extracted facts before they are written", async () => {
    dir = tempDir();
    const secrets = [
      "Uses OpenAI key sk-proj-abcdefghijklmnop1234567890",
      "GitHub token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
      "AWS access key AKIAIOSFODNN7EXAMPLE with aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "Calls the API with Authorization: Bearer abcdef0123456789abcdef",
      "Database login uses password=hunter22",
      "Said their password is Tr0ub4dor&3",
    ];
    h = await harness({
      baseDir: dir.path,
      memory: { debounce_ms: 0 },
      extractor: () => ({ text: extractionReply(secrets.map((content) => ({ content }))) }),
    });
    await h.client.chat("Here are my credentials, remember them.", { threadId: "t1" });
    await h.service.flush();
    const stored = (await h.memory.getMemory()).facts.map((f) => f.content);
    expect(stored).toHaveLength(secrets.length);
    const joined = stored.join("\n");
    for (const secret of [
      "sk-proj-abc",
      "ghp_abc",
      "AKIAIOSFODNN7EXAMPLE",
      "wJalrXUtnFEMI",
      "abcdef0123456789abcdef",
      "hunter22",
      "Tr0ub4dor",
    ]) {
      expect(joined).not.toContain(secret);
    }
    expect(stored.every((s) => s.includes("[REDACTED]"))).toBe(true);
    expect(joined).toContain("Uses OpenAI key");
  });

  it("keeps each custom agent's memory apart from the user's default memory", async () => {
    dir = tempDir();
    h = await harness({
      baseDir: dir.path,
      memory: { debounce_ms: 0 },
      extractor: (messages) => ({
        text: extractionReply([{ content: messages.at(-1)?.text.includes("sourdough") ? "Bakes sourdough bread" : "Runs marathons" }]),
      }),
    });
    await h.client.saveAgent("chef", { soul: "You are Chef." });
    await h.client.chat("I bake sourdough bread on Sundays.", { threadId: "t1", agent: "chef" });
    await h.client.chat("I run marathons.", { threadId: "t2" });
    await h.service.flush();
    expect((await h.memory.getMemory({ agent: "chef" })).facts.map((f) => f.content)).toEqual(["Bakes sourdough bread"]);
    expect((await h.memory.getMemory()).facts.map((f) => f.content)).toEqual(["Runs marathons"]);
    await h.client.chat("Any bread tips for sourdough?", { threadId: "t3" });
    expect(memoryMessages(h.chat().calls.at(-1) as never)).toEqual([]);
    await h.client.chat("Any bread tips for sourdough?", { threadId: "t4", agent: "chef" });
    expect(memoryMessages(h.chat().calls.at(-1) as never)[0]).toContain("Bakes sourdough bread");
  });
});
