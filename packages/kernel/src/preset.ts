import type { KernelConfig } from "./config/schema.js";

/** The packages of the default preset: the runtime, cassette models, and the storage engines `storage:` names. */
export function presetPackages(config: { storage: Pick<KernelConfig["storage"], "backend" | "checkpointer"> }): string[] {
  const engines = new Set([config.storage.backend, config.storage.checkpointer ?? config.storage.backend]);
  const packages = ["@antler/plugin-runtime", "@antler/plugin-cassette"];
  // `memory` keeps Antler's tables in an in-memory SQLite database.
  if (engines.has("sqlite") || engines.has("memory")) packages.push("@antler/plugin-storage-sqlite");
  if (engines.has("postgres")) packages.push("@antler/plugin-storage-postgres");
  return packages;
}
