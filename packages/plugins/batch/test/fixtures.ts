import { type AntlerDatabase, createKernel, type KernelConfigInput, type Migration, silentLogger } from "@antler/kernel";
import postgres from "@antler/plugin-storage-postgres";
import sqlite from "@antler/plugin-storage-sqlite";
import { BatchStore, batchMigrations, type NormalizedSubmission } from "../src/index.js";

/** Opens Antler's tables the way the batch plugin does, through a kernel with the storage plugins. */
export async function createDatabase(
  storage: NonNullable<KernelConfigInput["storage"]>,
  options: { schema?: string; migrations?: readonly Migration[]; baseDir?: string } = {},
): Promise<AntlerDatabase> {
  const { schema, migrations = batchMigrations, baseDir = "/nonexistent" } = options;
  const kernel = await createKernel({
    config: { preset: "none", base_dir: baseDir, storage },
    plugins: [sqlite, postgres],
    discover: false,
    env: {},
    logger: silentLogger(),
  });
  return kernel.openDatabase({ schema, migrations });
}

export async function memoryStore(): Promise<{ store: BatchStore; database: AntlerDatabase }> {
  const database = await createDatabase({ backend: "memory" });
  return { store: new BatchStore(database), database };
}

export async function postgresStore(url: string, schema: string): Promise<{ store: BatchStore; database: AntlerDatabase }> {
  const database = await createDatabase({ backend: "postgres", postgres_url: url }, { schema });
  return { store: new BatchStore(database), database };
}

export function submission(count: number, overrides: Partial<NormalizedSubmission> = {}): NormalizedSubmission {
  return {
    title: "test batch",
    subagentType: "general-purpose",
    items: Array.from({ length: count }, (_, i) => ({
      key: `item-${String(i).padStart(4, "0")}`,
      prompt: `prompt ${i}`,
      acceptanceCriteria: [],
    })),
    maxLiveItems: null,
    maxRunningItems: null,
    ...overrides,
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const value of iterable) out.push(value);
  return out;
}
