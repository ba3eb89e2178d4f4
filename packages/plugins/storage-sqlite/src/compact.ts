import type { CliIO, StorageOpenRequest } from "@antler/kernel";
import { runCompactCommand } from "@antler/storage-kit";
import { checkpointFile, openSqliteCheckpointer } from "./sqlite.js";

/** `antler storage compact` on the SQLite checkpoint file `storage:` names. */
export function compactCommand(args: string[], io: CliIO, request: StorageOpenRequest): Promise<number> {
  return runCompactCommand(args, io, async () => {
    const file = checkpointFile(request);
    const checkpointer = await openSqliteCheckpointer(file, {
      mode: request.storage.checkpoint.mode,
      keep: request.storage.checkpoint.keep,
    });
    return {
      retention: checkpointer.retention,
      location: file,
      vacuum: () => checkpointer.vacuum(),
      vacuumHint: `SQLite keeps freed pages inside ${file}; run \`antler storage compact --vacuum\` while nothing else uses the file to give them back to the disk (it rewrites the file, needing up to its size free).`,
      close: () => checkpointer.close(),
    };
  });
}
