import { definePlugin, KERNEL_VERSION } from "@antler/kernel";

const COMPACT_SUMMARY =
  "Apply checkpoint retention now, store whole-list (older or full-mode) checkpoints as deltas, and drop unused messages; reports each thread's checkpoints and bytes before and after.";

/**
 * Storage backend `sqlite` (the default): Antler's tables and thread checkpoints in files under
 * `<base_dir>/<sqlite_dir>`, and in-memory tables for `storage.backend: memory`. better-sqlite3 is loaded when a
 * handle is first opened, not when the plugin loads.
 */
export default definePlugin({
  name: "@antler/plugin-storage-sqlite",
  version: "0.1.0",
  kernel: `^${KERNEL_VERSION}`,
  description: "SQLite storage: Antler's tables and LangGraph checkpoints (better-sqlite3).",
  setup(ctx) {
    ctx.storage.addBackend({
      id: "sqlite",
      description: "SQLite files under <base_dir>/<sqlite_dir>",
      inMemoryDatabase: true,
      inMemoryCheckpointer: true,
      async openDatabase(request) {
        const sqlite = await import("./sqlite.js");
        return sqlite.openSqliteDatabase(sqlite.databaseFile(request));
      },
      async openCheckpointer(request) {
        const sqlite = await import("./sqlite.js");
        return sqlite.openSqliteCheckpointer(sqlite.checkpointFile(request), {
          mode: request.storage.checkpoint.mode,
          keep: request.storage.checkpoint.keep,
        });
      },
    });
    const storage = ctx.kernelConfig.storage;
    // The command belongs to whichever plugin holds the checkpoints; in memory there is nothing to compact.
    if ((storage.checkpointer ?? storage.backend) === "sqlite") {
      ctx.commands.add({
        name: "storage compact",
        summary: COMPACT_SUMMARY,
        usage: "antler storage compact [--thread id] [--dry-run] [--vacuum] [--config path]",
        run: async (args, io) =>
          (await import("./compact.js")).compactCommand(args, io, { storage, baseDir: ctx.paths.baseDir, logger: ctx.logger }),
      });
    }
  },
});
