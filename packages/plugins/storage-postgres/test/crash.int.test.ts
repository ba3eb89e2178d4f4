import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describeUnless, postgresTestUrl, usePostgresSchema } from "@antler/kernel/testing";
import { runCheckpointCrashSuite } from "@antler/storage-kit/testing";
import { openPostgresCheckpointer } from "../src/postgres.js";

const script = fileURLToPath(new URL("./fixtures/crash-writer.mjs", import.meta.url));
const built = [new URL("../dist/index.js", import.meta.url), new URL("../../../storage-kit/dist/testing/crash.js", import.meta.url)].every(
  (file) => existsSync(file),
);
const url = postgresTestUrl();

describeUnless(
  "PostgreSQL checkpoints under kill -9",
  url === undefined
    ? "ANTLER_TEST_PG_URL is not set"
    : built
      ? undefined
      : "the writer child runs the built packages: pnpm --filter @antler/plugin-storage-postgres... run build",
  () => {
    const pgUrl = url as string;
    const schema = usePostgresSchema(pgUrl, { prefix: "antler_pg_crash", scope: "all" });

    runCheckpointCrashSuite("PostgreSQL", {
      script,
      args: (threadId, turns) => [pgUrl, schema.name, threadId, String(turns)],
      open: async () => {
        const checkpointer = await openPostgresCheckpointer(pgUrl, { schema: schema.name, mode: "delta", pool: { max: 4 } });
        return { saver: checkpointer.saver, close: () => checkpointer.close() };
      },
      points: ["mid-checkpoint-write"],
    });
  },
);
