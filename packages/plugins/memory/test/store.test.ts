import { runMigrations } from "@antler/kernel";
import { createTestKernel } from "@antler/kernel/testing";
import sqlitePlugin from "@antler/plugin-storage-sqlite";
import { describe, expect, it } from "vitest";
import { MAX_TERM_DOCS, MemoryStore, memoryMigrations } from "../src/index.js";
import { tempDir } from "./helpers.js";
import { storeScenarios } from "./store-scenarios.js";

describe("memory store on SQLite (FTS5)", () => {
  storeScenarios(async () => {
    const dir = tempDir();
    const kernel = await createTestKernel({
      plugins: [sqlitePlugin],
      config: { base_dir: dir.path, storage: { backend: "sqlite" } },
      cwd: dir.path,
    });
    const database = await kernel.openDatabase();
    return {
      database,
      kernel,
      cleanup: async () => {
        await kernel.close();
        dir.remove();
      },
    };
  });
});

describe("memory search on SQLite: terms found in very many facts", () => {
  it("drops a term in more than MAX_TERM_DOCS facts when rarer ones match, and falls back to it alone", async () => {
    const dir = tempDir();
    const kernel = await createTestKernel({
      plugins: [sqlitePlugin],
      config: { base_dir: dir.path, storage: { backend: "sqlite" } },
      cwd: dir.path,
    });
    const database = await kernel.openDatabase();
    try {
      await runMigrations(database, memoryMigrations(database.dialect));
      const store = new MemoryStore(database);
      const scope = { userId: "alice", agentName: "" };
      const fact = (content: string) => ({ content, category: "context", confidence: 0.8, source: "manual" });
      const filler = Array.from({ length: MAX_TERM_DOCS + 50 }, (_, i) => fact(`Plans trip number ${i}`));
      await store.insertFacts(scope, [...filler, fact("Bakes sourdough on Sundays"), fact("Plans a sourdough workshop")]);
      const hits = await store.search(scope, "any sourdough tips for my plans?", { limit: 10 });
      expect(hits.map((h) => h.content).sort()).toEqual(["Bakes sourdough on Sundays", "Plans a sourdough workshop"]);
      expect(await store.search(scope, "my plans", { limit: 3 })).toHaveLength(3);
    } finally {
      await database.close();
      await kernel.close();
      dir.remove();
    }
  });
});
