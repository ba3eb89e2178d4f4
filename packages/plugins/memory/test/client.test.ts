import { isAntlerError, redactText } from "@antler/kernel";
import { createTestKernel } from "@antler/kernel/testing";
import runtimePlugin from "@antler/plugin-runtime";
import { afterEach, describe, expect, it } from "vitest";
import memoryPlugin, { memoryExportSchema } from "../src/index.js";
import { type Harness, harness, tempDir } from "./helpers.js";

let dir: ReturnType<typeof tempDir>;
let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
  dir?.remove();
});

async function seeded(): Promise<Harness> {
  dir = tempDir();
  h = await harness({ baseDir: dir.path });
  await h.memory.createFact({ content: "Writes backend services in TypeScript", category: "preference", confidence: 0.9 });
  await h.memory.createFact({ content: "Training for the Berlin marathon", category: "goal" });
  await h.memory.importMemory({
    version: 1,
    exported_at: new Date().toISOString(),
    user_id: "alice",
    agent_name: null,
    profile: { work_context: "Backend engineer at a logistics company", personal_context: "Runner", top_of_mind: "Marathon in October" },
    history: { recent_months: "Migrated services to TypeScript", earlier_context: "", long_term_background: "" },
    facts: [],
  });
  return h;
}

describe("MemoryClient", () => {
  it("export then import round-trips profile, history and facts (ids, timestamps and sources kept)", async () => {
    const client = (await seeded()).memory;
    const exported = await client.exportMemory();
    expect(memoryExportSchema.parse(JSON.parse(JSON.stringify(exported)))).toEqual(exported);
    expect(exported.facts).toHaveLength(2);
    const before = await client.getMemory();
    await client.clearMemory();
    expect((await client.getMemory()).facts).toEqual([]);
    const restored = await client.importMemory(JSON.parse(JSON.stringify(exported)));
    expect(restored.facts).toEqual(before.facts);
    expect(restored.profile).toEqual(before.profile);
    expect(restored.history).toEqual(before.history);
    // And into another user: the same memory, in bob's scope, without touching alice's.
    const bob = await client.importMemory(exported, { userId: "bob" });
    expect(bob.facts.map((f) => f.content).sort()).toEqual(before.facts.map((f) => f.content).sort());
    expect(bob.user_id).toBe("bob");
    expect((await client.getMemory()).facts).toEqual(before.facts);
    // Importing the same file again (merge) adds nothing twice.
    expect((await client.importMemory(exported)).facts).toHaveLength(2);
    // replace: exactly the file's memory.
    await client.createFact({ content: "Temporary note" });
    expect((await client.importMemory(exported, { mode: "replace" })).facts).toEqual(before.facts);
  });

  it("refuses a malformed import as a whole, naming the field, and writes nothing", async () => {
    const client = (await seeded()).memory;
    const before = await client.getMemory();
    const good = await client.exportMemory();
    const bad: Array<[unknown, RegExp]> = [
      [{ ...good, version: 2 }, /version must be 1/],
      [
        { ...good, facts: [...good.facts, { ...good.facts[0], id: "x", category: "gossip" }] },
        /facts\.2\.category: category must be one of/,
      ],
      [{ ...good, facts: [{ ...good.facts[0], id: "y", content: "  " }] }, /a fact's content is empty/],
      [{ ...good, extra: true }, /Unrecognized key/],
      ["not an object", /the import file is not valid/],
    ];
    for (const [data, message] of bad) {
      const error = await client.importMemory(data).catch((e: unknown) => e);
      expect(isAntlerError(error) && error.code).toBe("ANTLER_ERR_MEMORY_INVALID");
      expect((error as Error).message).toMatch(message);
    }
    expect(await client.getMemory()).toEqual(before);
  });

  it("scopes every fact operation to the user and agent: another user's fact is not found", async () => {
    const client = (await seeded()).memory;
    const fact = (await client.getMemory()).facts[0];
    if (!fact) throw new Error("no fact");
    for (const op of [
      () => client.getFact(fact.id, { userId: "bob" }),
      () => client.updateFact(fact.id, { content: "hijacked" }, { userId: "bob" }),
      () => client.deleteFact(fact.id, { userId: "bob" }),
      () => client.deleteFact(fact.id, { agent: "chef" }),
    ]) {
      const error = await op().catch((e: unknown) => e);
      expect(isAntlerError(error) && error.code).toBe("ANTLER_ERR_MEMORY_NOT_FOUND");
    }
    expect(await client.getFact(fact.id)).toEqual(fact);
    expect((await client.getMemory({ userId: "bob" })).facts).toEqual([]);
    const badAgent = await client.getMemory({ agent: "../etc" }).catch((e: unknown) => e);
    expect((badAgent as Error).message).toMatch(/agent name "..\/etc" is not valid/);
  });

  it("redacts secrets in facts created and updated through the client", async () => {
    dir = tempDir();
    h = await harness({ baseDir: dir.path });
    const created = await h.memory.createFact({ content: "Staging key is sk-live0123456789abcdefghij and db password=s3cret!" });
    expect(created.content).toBe("Staging key is [REDACTED] and db password=[REDACTED]");
    const updated = await h.memory.updateFact(created.id, { content: "Uses AKIAIOSFODNN7EXAMPLE for backups" });
    expect(updated.content).toBe("Uses [REDACTED] for backups");
  });

  it("redacts facts with the same redactor as run records and logs: PEM keys, suffixed names, numeric secrets", async () => {
    dir = tempDir();
    h = await harness({ baseDir: dir.path });
    const content = [
      "Deploy key -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBody\n-----END EC PRIVATE KEY----- on the box",
      "config has private_key_pem=pem-value-77 and apiKeyObj: obj-value-88",
      "bank card_pin=4821, and the otp is 771204",
    ].join("; ");
    const created = await h.memory.createFact({ content });
    for (const secret of ["MHcCAQEEIBody", "pem-value-77", "obj-value-88", "4821", "771204"]) expect(created.content).not.toContain(secret);
    expect(created.content).toBe(redactText(content, { prose: true }));
    expect(created.content).toContain("Deploy key");
  });

  it("reports its config and status in the gateway's shapes", async () => {
    const client = (await seeded()).memory;
    expect(client.getMemoryConfig()).toMatchObject({
      enabled: true,
      mode: "middleware",
      model: "extractor",
      storage: "sqlite",
      retrieval: "fts5",
    });
    expect(await client.getMemoryStatus()).toMatchObject({ user_id: "alice", agent_name: null, fact_count: 2, pending_extractions: 0 });
  });
});

describe("the memory: config section", () => {
  async function boot(memory: unknown) {
    dir = tempDir();
    return createTestKernel({
      plugins: [runtimePlugin, memoryPlugin],
      config: { base_dir: dir.path, memory } as never,
      cwd: dir.path,
      start: false,
    }).then(
      async (k) => {
        await k.close();
        return null;
      },
      (e: unknown) => e as Error,
    );
  }

  it("rejects an unknown mode, an unknown key and an out-of-range value with the config path", async () => {
    expect((await boot({ mode: "auto" }))?.message).toMatch(/memory\.mode[\s\S]*"middleware".*"tool"/);
    expect((await boot({ debounce: 5 }))?.message).toMatch(/memory[\s\S]*debounce/);
    expect((await boot({ fact_confidence_threshold: 1.5 }))?.message).toMatch(/memory\.fact_confidence_threshold/);
    expect(await boot({ mode: "tool", debounce_ms: 0 })).toBeNull();
  });
});
