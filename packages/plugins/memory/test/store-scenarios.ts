import { type AntlerDatabase, type Kernel, runMigrations } from "@antler/kernel";
import { sql } from "kysely";
import { afterEach, beforeEach, expect, it } from "vitest";
import { MemoryService, MemoryStore, memoryMigrations, memorySectionSchema } from "../src/index.js";

const alice = { userId: "alice", agentName: "" };
const bob = { userId: "bob", agentName: "" };
const aliceChef = { userId: "alice", agentName: "chef" };

/** The store's behaviour on one database; run against SQLite (unit) and PostgreSQL (integration). */
export function storeScenarios(open: () => Promise<{ database: AntlerDatabase; kernel: Kernel; cleanup(): Promise<void> }>): void {
  let opened: { database: AntlerDatabase; kernel: Kernel; cleanup(): Promise<void> };
  let store: MemoryStore;

  beforeEach(async () => {
    opened = await open();
    await runMigrations(opened.database, memoryMigrations(opened.database.dialect));
    store = new MemoryStore(opened.database);
  });

  afterEach(async () => {
    await opened.database.close();
    await opened.cleanup();
  });

  const fact = (content: string, extra: Partial<{ category: string; confidence: number }> = {}) => ({
    content,
    category: extra.category ?? "context",
    confidence: extra.confidence ?? 0.8,
    source: "manual",
  });

  it("applies its migrations once: a second run finds nothing to do", async () => {
    expect(await runMigrations(opened.database, memoryMigrations(opened.database.dialect))).toEqual([]);
  });

  it("finds the facts that share words with the query, most relevant first, and only in the caller's scope", async () => {
    await store.insertFacts(alice, [
      fact("Writes backend services in TypeScript"),
      fact("Has a dog named Biscuit"),
      fact("Is learning TypeScript generics slowly"),
    ]);
    await store.insertFacts(bob, [fact("Writes backend services in TypeScript too")]);
    await store.insertFacts(aliceChef, [fact("Backend of the kitchen uses TypeScript")]);
    const hits = await store.search(alice, "Which language for the new backend in TypeScript?", { limit: 10 });
    // Both query words beat one of them; the dog shares none.
    expect(hits.map((h) => h.content)).toEqual(["Writes backend services in TypeScript", "Is learning TypeScript generics slowly"]);
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? Number.POSITIVE_INFINITY);
    expect((await store.search(bob, "typescript", { limit: 10 })).map((h) => h.content)).toEqual([
      "Writes backend services in TypeScript too",
    ]);
    expect((await store.search(aliceChef, "typescript", { limit: 10 })).map((h) => h.content)).toEqual([
      "Backend of the kitchen uses TypeScript",
    ]);
    expect(await store.search(alice, "what is the", { limit: 10 })).toEqual([]);
  });

  it("matches word forms (stemming) and treats query punctuation as text, not search syntax", async () => {
    await store.insertFacts(alice, [fact("Goes hiking in the Alps every summer")]);
    expect((await store.search(alice, "any hikes planned?", { limit: 5 })).map((h) => h.content)).toEqual([
      "Goes hiking in the Alps every summer",
    ]);
    for (const nasty of ['alps" OR scope:*', "alps) AND NOT (x", "alps' ; drop table memory_facts; --", "alps:* | !x & (y"]) {
      expect((await store.search(alice, nasty, { limit: 5 })).map((h) => h.content)).toEqual(["Goes hiking in the Alps every summer"]);
    }
  });

  it("keeps the full-text index in step with updates and deletes", async () => {
    const [created] = await store.insertFacts(alice, [fact("Lives in Berlin")]);
    const id = created?.id as string;
    await store.updateFact(alice, id, { content: "Lives in Lisbon" });
    expect(await store.search(alice, "Berlin", { limit: 5 })).toEqual([]);
    expect((await store.search(alice, "Lisbon", { limit: 5 })).map((h) => h.id)).toEqual([id]);
    expect(await store.updateFact(bob, id, { content: "stolen" })).toBeUndefined();
    expect(await store.deleteFacts(bob, [id])).toBe(0);
    expect(await store.deleteFacts(alice, [id])).toBe(1);
    expect(await store.search(alice, "Lisbon", { limit: 5 })).toEqual([]);
  });

  it("filters by category and evicts the least confident facts beyond the limit", async () => {
    await store.insertFacts(alice, [
      fact("Likes green tea", { category: "preference", confidence: 0.9 }),
      fact("Tea ceremony course next month", { category: "goal", confidence: 0.75 }),
      fact("Maybe allergic to tea", { category: "context", confidence: 0.5 }),
    ]);
    expect((await store.search(alice, "tea", { limit: 5, category: "goal" })).map((h) => h.content)).toEqual([
      "Tea ceremony course next month",
    ]);
    expect(await store.evictBeyond(alice, 2)).toBe(1);
    expect((await store.listFacts(alice)).map((f) => f.content).sort()).toEqual(["Likes green tea", "Tea ceremony course next month"]);
    await store.clear(alice);
    expect(await store.countFacts(alice)).toBe(0);
    expect(await store.search(alice, "tea", { limit: 5 })).toEqual([]);
  });

  it("bumps a scope's version on every insert, update and delete of its facts or profile, and no other scope's", async () => {
    expect(await store.version(alice)).toBe(0);
    const [first] = await store.insertFacts(alice, [fact("Runs marathons"), fact("Bakes sourdough")]);
    const afterInsert = await store.version(alice);
    expect(afterInsert).toBeGreaterThan(0);
    await store.updateFact(alice, first?.id ?? "", { confidence: 0.9 });
    const afterUpdate = await store.version(alice);
    expect(afterUpdate).toBeGreaterThan(afterInsert);
    await store.deleteFacts(alice, [first?.id ?? ""]);
    expect(await store.version(alice)).toBeGreaterThan(afterUpdate);
    const afterDelete = await store.version(alice);
    await store.saveProfile(alice, { top_of_mind: "Q3 release" });
    expect(await store.version(alice)).toBeGreaterThan(afterDelete);
    expect(await store.version(bob)).toBe(0);
    expect(await store.version(aliceChef)).toBe(0);
  });

  it("serves search from an in-memory index that follows every write to the database, whoever makes it", async () => {
    const service = new MemoryService({
      kernel: opened.kernel,
      config: memorySectionSchema.parse({}),
      logger: opened.kernel.logger,
      database: opened.database,
    });
    const found = async (query: string) => (await service.search(alice, query, { limit: 5 })).map((h) => h.content);
    await store.insertFacts(alice, [fact("Runs marathons in spring"), fact("Bakes sourdough on Sundays")]);
    await store.insertFacts(bob, [fact("Runs marathons too")]);
    expect(await found("any marathon plans?")).toEqual(["Runs marathons in spring"]);
    // Another instance's write (a second store on the database) is seen by the next search.
    await new MemoryStore(opened.database).insertFacts(alice, [fact("Ran the Lisbon marathon")]);
    expect((await found("marathon")).sort()).toEqual(["Ran the Lisbon marathon", "Runs marathons in spring"]);
    // So is a manual fix in SQL that bypasses the store.
    await sql`update memory_facts set content = 'Walks the dog on Sundays' where content = 'Ran the Lisbon marathon'`.execute(
      opened.database.db,
    );
    expect(await found("marathon")).toEqual(["Runs marathons in spring"]);
    // The shorter fact ranks first (BM25 length normalisation).
    expect(await found("sundays")).toEqual(["Bakes sourdough on Sundays", "Walks the dog on Sundays"]);
    await sql`delete from memory_facts where user_id = 'alice'`.execute(opened.database.db);
    expect(await found("marathon")).toEqual([]);
    // The injected block's profile follows writes the same way.
    expect(await service.contextBlock(alice, "anything")).toBeNull();
    await new MemoryStore(opened.database).saveProfile(alice, { top_of_mind: "Ship the Q3 release" });
    expect(await service.contextBlock(alice, "anything")).toContain("Ship the Q3 release");
    await service.close();
  });

  it("lets a turn's lookup trust its last version read for injection_recheck_ms, but never past a write of this process", async () => {
    const service = (recheckMs: number) =>
      new MemoryService({
        kernel: opened.kernel,
        config: memorySectionSchema.parse({ injection_recheck_ms: recheckMs }),
        logger: opened.kernel.logger,
        database: opened.database,
      });
    const slow = service(600_000);
    const quick = service(40);
    await store.insertFacts(alice, [fact("Runs marathons in spring")]);
    expect(await slow.contextBlock(alice, "marathon")).toContain("Runs marathons in spring");
    expect(await quick.contextBlock(alice, "marathon")).toContain("Runs marathons in spring");
    // A write no store of this process made (another instance's, or SQL by hand) waits out the recheck time...
    await sql`update memory_facts set content = 'Ran the Lisbon marathon' where user_id = 'alice'`.execute(opened.database.db);
    expect(await slow.contextBlock(alice, "marathon")).toContain("Runs marathons in spring");
    await new Promise((done) => setTimeout(done, 60));
    expect(await quick.contextBlock(alice, "marathon")).toContain("Ran the Lisbon marathon");
    // ...while any write through a store of this process is seen by the very next lookup, with everything before it.
    await slow.createFact(bob, { content: "Has a dog" });
    const block = await slow.contextBlock(alice, "marathon");
    expect(block).toContain("Ran the Lisbon marathon");
    expect(block).not.toContain("Runs marathons in spring");
    // Searches (memory_search, the routes, the client) always read the version.
    await sql`delete from memory_facts where user_id = 'alice'`.execute(opened.database.db);
    expect(await slow.search(alice, "marathon")).toEqual([]);
    await slow.close();
    await quick.close();
  });
}
