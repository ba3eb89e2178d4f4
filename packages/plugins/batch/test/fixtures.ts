import type { AntlerDatabase } from "@antler/kernel";
import { createDatabase } from "@antler/kernel";
import { BatchStore, batchMigrations, type NormalizedSubmission } from "../src/index.js";

export async function memoryStore(): Promise<{ store: BatchStore; database: AntlerDatabase }> {
  const database = await createDatabase({ backend: "memory" }, { baseDir: "/nonexistent", migrations: batchMigrations });
  return { store: new BatchStore(database), database };
}

export async function postgresStore(url: string, schema: string): Promise<{ store: BatchStore; database: AntlerDatabase }> {
  const database = await createDatabase(
    { backend: "postgres", postgres_url: url },
    { baseDir: "/nonexistent", schema, migrations: batchMigrations },
  );
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
