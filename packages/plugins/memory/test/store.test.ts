import { createTestKernel } from "@antler/kernel/testing";
import sqlitePlugin from "@antler/plugin-storage-sqlite";
import { describe } from "vitest";
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
      cleanup: async () => {
        await kernel.close();
        dir.remove();
      },
    };
  });
});
