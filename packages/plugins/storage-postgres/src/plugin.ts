import { definePlugin, KERNEL_VERSION } from "@antler/kernel";

/**
 * Storage backend `postgres`: Antler's tables and thread checkpoints in PostgreSQL (`storage.postgres_url`,
 * optionally `storage.postgres_schema`), for several gateways and batch workers sharing one database. `pg` is
 * loaded when a handle is first opened.
 */
export default definePlugin({
  name: "@antler/plugin-storage-postgres",
  version: "0.1.0",
  kernel: `^${KERNEL_VERSION}`,
  description: "PostgreSQL storage: Antler's tables and LangGraph checkpoints (pg).",
  setup(ctx) {
    ctx.storage.addBackend({
      id: "postgres",
      description: "PostgreSQL at storage.postgres_url",
      async openDatabase(request) {
        const postgres = await import("./postgres.js");
        const url = postgres.requirePostgresUrl(request.storage, "the database");
        return postgres.openPostgresDatabase(url, {
          schema: request.schema,
          logger: request.logger,
          ...postgres.poolOptionsOf(request.storage),
        });
      },
      async openCheckpointer(request) {
        const postgres = await import("./postgres.js");
        const url = postgres.requirePostgresUrl(request.storage, "the checkpointer");
        return postgres.openPostgresCheckpointer(url, {
          schema: request.schema,
          logger: request.logger,
          mode: request.storage.checkpoint.mode,
          keep: request.storage.checkpoint.keep,
          ...postgres.poolOptionsOf(request.storage),
        });
      },
    });
    const storage = ctx.kernelConfig.storage;
    // Wakes executors of queued runs in other processes at once (LISTEN/NOTIFY), instead of at their next poll.
    // Same registry key as the runtime's QUEUE_NOTIFICATIONS_TOKEN.
    if (storage.backend === "postgres") {
      ctx.provide(
        { key: Symbol.for("@antler/plugin-runtime/queue-notifications"), name: "plugin-runtime.queue-notifications" },
        {
          useValue: Object.freeze({
            async listen(channel: string, onNotify: () => void) {
              const postgres = await import("./postgres.js");
              const url = postgres.requirePostgresUrl(storage, "the run queue's notifications");
              return postgres.listenPostgres(url, channel, onNotify, ctx.logger);
            },
          }),
        },
      );
    }
    // The command belongs to whichever plugin holds the checkpoints.
    if ((storage.checkpointer ?? storage.backend) === "postgres") {
      ctx.commands.add({
        name: "storage compact",
        summary:
          "Apply checkpoint retention now, store whole-list (older or full-mode) checkpoints as deltas, and drop unused messages; reports each thread's checkpoints and bytes before and after.",
        usage: "antler storage compact [--thread id] [--dry-run] [--vacuum] [--config path]",
        run: async (args, io) => (await import("./compact.js")).compactCommand(args, io, storage, ctx.logger),
      });
    }
  },
});
