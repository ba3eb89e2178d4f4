import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describeUnless } from "@antler/kernel/testing";
import { runCheckpointCrashSuite } from "@antler/storage-kit/testing";
import { afterAll } from "vitest";
import { openSqliteCheckpointer } from "../src/sqlite.js";

const script = fileURLToPath(new URL("./fixtures/crash-writer.mjs", import.meta.url));
const built = [new URL("../dist/index.js", import.meta.url), new URL("../../../storage-kit/dist/testing/crash.js", import.meta.url)].every(
  (file) => existsSync(file),
);

describeUnless(
  "SQLite checkpoints under kill -9",
  built ? undefined : "the writer child runs the built packages: pnpm --filter @antler/plugin-storage-sqlite... run build",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "antler-sqlite-crash-"));
    const file = join(dir, "checkpoints.sqlite");
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    runCheckpointCrashSuite("SQLite", {
      script,
      args: (threadId, turns) => [file, threadId, String(turns)],
      open: async () => {
        const checkpointer = await openSqliteCheckpointer(file, { mode: "delta" });
        return { saver: checkpointer.saver, close: () => checkpointer.close() };
      },
      points: ["mid-log-append", "mid-checkpoint-write"],
    });
  },
);
