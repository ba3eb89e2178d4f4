import type { CliIO, Logger, StorageConfig } from "@antler/kernel";
import { runCompactCommand } from "@antler/storage-kit";
import { openPostgresCheckpointer, poolOptionsOf, requirePostgresUrl } from "./postgres.js";

/** `antler storage compact` on the PostgreSQL checkpoint tables `storage:` names. */
export function compactCommand(args: string[], io: CliIO, storage: StorageConfig, logger: Logger): Promise<number> {
  return runCompactCommand(args, io, async () => {
    const url = requirePostgresUrl(storage, "antler storage compact");
    const checkpointer = await openPostgresCheckpointer(url, {
      schema: storage.postgres_schema,
      logger,
      keep: storage.checkpoint.keep,
      ...poolOptionsOf(storage),
    });
    return {
      retention: checkpointer.retention,
      location: checkpointer.location,
      vacuum: async () => {
        await checkpointer.vacuum();
        return {};
      },
      vacuumHint:
        "PostgreSQL reuses the freed space for new rows once autovacuum (or `antler storage compact --vacuum`, which runs VACUUM ANALYZE on the checkpoint tables) has passed; VACUUM FULL returns it to the disk but locks the tables while it runs.",
      close: () => checkpointer.close(),
    };
  });
}
