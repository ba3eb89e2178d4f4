import { resolve } from "node:path";
import type { StorageConfig } from "../config/schema.js";
import { AntlerError, ErrorCodes } from "../errors.js";
import type { Logger } from "../logging.js";
import { ProviderRegistry } from "../registry.js";
import type {
  AntlerDatabase,
  Checkpointer,
  OpenCheckpointerOptions,
  OpenDatabaseOptions,
  StorageAccess,
  StorageBackend,
  StorageOpenRequest,
} from "./contract.js";

/** The plugin that brings each engine, for error hints. */
const BACKEND_PLUGINS: Readonly<Record<string, string>> = {
  sqlite: "@antler/plugin-storage-sqlite",
  postgres: "@antler/plugin-storage-postgres",
};

/**
 * `memory` is the kernel's own id: tables and checkpoints in whichever backend can hold them in memory (the SQLite
 * plugin), checkpoints in a plain MemorySaver when none can.
 */
function memoryBackend(holders: () => Array<{ value: StorageBackend }>): StorageBackend {
  return {
    id: "memory",
    description: "Tables and checkpoints in process memory (tests, throwaway runs).",
    async openCheckpointer(request) {
      const holder = holders().find((e) => e.value.inMemoryCheckpointer && e.value.openCheckpointer)?.value;
      if (holder?.openCheckpointer) return holder.openCheckpointer({ ...request, inMemory: true });
      const { MemorySaver } = await import("@langchain/langgraph-checkpoint");
      return { saver: new MemorySaver(), kind: "memory", location: "memory", close: async () => {} };
    },
  };
}

/** Storage backends registered by plugins, and opening handles on the configured ones. */
export class StorageRegistry implements StorageAccess {
  private readonly backends = new ProviderRegistry<StorageBackend>("storage backend");

  constructor(
    private readonly storage: StorageConfig,
    private readonly baseDir: string,
    private readonly logger: Logger,
  ) {
    this.backends.add(
      memoryBackend(() => this.backends.list()),
      "@antler/kernel",
      "storage",
    );
  }

  add(backend: StorageBackend, plugin: string, where: string): void {
    this.backends.add(backend, plugin, where);
  }

  get ids(): string[] {
    return this.backends.ids;
  }

  private request(schema: string | undefined, inMemory = false): StorageOpenRequest {
    return {
      storage: this.storage,
      baseDir: resolve(this.baseDir),
      schema: schema ?? this.storage.postgres_schema,
      inMemory,
      logger: this.logger,
    };
  }

  private find(id: string, where: string, purpose: string): StorageBackend {
    const backend = this.backends.get(id);
    if (backend) return backend;
    const plugin = BACKEND_PLUGINS[id];
    throw new AntlerError(ErrorCodes.STORAGE_BACKEND_NOT_FOUND, `${purpose} uses storage backend "${id}", which no plugin registered`, {
      where,
      hint: plugin
        ? `Enable ${plugin} in config.yaml \`plugins:\` (the default preset adds it when storage names it).`
        : `Registered backends: ${this.ids.join(", ")}. Enable the plugin that provides "${id}".`,
    });
  }

  async openDatabase(options: OpenDatabaseOptions = {}): Promise<AntlerDatabase> {
    const id = this.storage.backend;
    let backend: StorageBackend;
    let inMemory = false;
    if (id === "memory") {
      inMemory = true;
      const holder = this.backends.list().find((e) => e.value.inMemoryDatabase && e.value.openDatabase);
      if (!holder) {
        throw new AntlerError(ErrorCodes.STORAGE_BACKEND_NOT_FOUND, "storage.backend memory needs a backend that keeps tables in memory", {
          where: "storage.backend",
          hint: `Enable ${BACKEND_PLUGINS.sqlite} (in-memory SQLite; part of the default preset).`,
        });
      }
      backend = holder.value;
    } else {
      backend = this.find(id, "storage.backend", "the database");
    }
    if (!backend.openDatabase) {
      throw new AntlerError(ErrorCodes.STORAGE_BACKEND_NOT_FOUND, `storage backend "${backend.id}" keeps no tables, only checkpoints`, {
        where: "storage.backend",
        hint: `Pick a backend for tables (${this.ids.filter((i) => this.backends.get(i)?.openDatabase).join(", ") || "sqlite, postgres"}) and keep "${backend.id}" under storage.checkpointer.`,
      });
    }
    const database = await backend.openDatabase(this.request(options.schema, inMemory));
    if (options.migrations?.length) {
      try {
        const { runMigrations } = await import("./migrations.js");
        const applied = await runMigrations(database, options.migrations);
        if (applied.length > 0) this.logger.info({ location: database.location, applied }, "database migrated");
      } catch (error) {
        await database.close();
        throw error;
      }
    }
    return database;
  }

  async openCheckpointer(options: OpenCheckpointerOptions = {}): Promise<Checkpointer> {
    const id = this.storage.checkpointer ?? this.storage.backend;
    const where = this.storage.checkpointer ? "storage.checkpointer" : "storage.backend";
    const backend = this.find(id, where, "the checkpointer");
    if (!backend.openCheckpointer) {
      throw new AntlerError(ErrorCodes.STORAGE_BACKEND_NOT_FOUND, `storage backend "${id}" keeps no checkpoints`, { where });
    }
    const checkpointer = await backend.openCheckpointer(this.request(options.schema));
    this.logger.debug({ kind: checkpointer.kind, location: checkpointer.location }, "checkpointer ready");
    return checkpointer;
  }
}
