import { createPostgresTestSchema, createTestKernel, describeWithPostgres } from "@antler/kernel/testing";
import postgresPlugin from "@antler/plugin-storage-postgres";
import { tempDir } from "./helpers.js";
import { storeScenarios } from "./store-scenarios.js";

describeWithPostgres("memory store on PostgreSQL (tsvector + GIN)", (url) => {
  storeScenarios(async () => {
    const dir = tempDir();
    const schema = await createPostgresTestSchema(url, "memory");
    const kernel = await createTestKernel({
      plugins: [postgresPlugin],
      config: { base_dir: dir.path, storage: { backend: "postgres", postgres_url: url, postgres_schema: schema.name } },
      cwd: dir.path,
    });
    const database = await kernel.openDatabase();
    return {
      database,
      kernel,
      cleanup: async () => {
        await kernel.close();
        await schema.drop();
        dir.remove();
      },
    };
  });
});
