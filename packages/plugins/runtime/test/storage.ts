import {
  type AntlerDatabase,
  type Checkpointer,
  createKernel,
  type Kernel,
  type KernelConfigInput,
  type Migration,
  silentLogger,
} from "@antler/kernel";
import postgres from "@antler/plugin-storage-postgres";
import sqlite from "@antler/plugin-storage-sqlite";
import { threadMigrations } from "../src/stores/threads.js";

export type StorageConfigInput = NonNullable<KernelConfigInput["storage"]>;

/** A kernel with both storage plugins and nothing else, to open stores the way the runtime does. */
export function storageKernel(storage: StorageConfigInput, baseDir: string): Promise<Kernel> {
  return createKernel({
    config: { preset: "none", base_dir: baseDir, storage },
    plugins: [sqlite, postgres],
    discover: false,
    env: {},
    logger: silentLogger(),
  });
}

/** Antler's tables with the thread registry migrated, plus `migrations`. */
export async function createDatabase(
  storage: StorageConfigInput,
  options: { baseDir: string; schema?: string | undefined; migrations?: readonly Migration[] },
): Promise<AntlerDatabase> {
  const kernel = await storageKernel(storage, options.baseDir);
  return kernel.openDatabase({ schema: options.schema, migrations: [...threadMigrations, ...(options.migrations ?? [])] });
}

export async function createCheckpointer(
  storage: StorageConfigInput,
  options: { baseDir: string; schema?: string | undefined },
): Promise<Checkpointer> {
  const kernel = await storageKernel(storage, options.baseDir);
  return kernel.openCheckpointer({ schema: options.schema });
}
