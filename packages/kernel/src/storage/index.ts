export { type Artifact, DEFAULT_MIME_TYPE, mimeTypeFor, readArtifact } from "./artifacts.js";
export {
  describePostgresTarget,
  parseStorageConfig,
  type StorageConfig,
  type StorageConfigInput,
  type StorageKind,
} from "./backend.js";
export { CHECKPOINTS_SQLITE_FILE, type Checkpointer, type CheckpointerOptions, createCheckpointer } from "./checkpointer.js";
export {
  ANTLER_SQLITE_FILE,
  type AntlerDatabase,
  type AntlerTables,
  coreMigrations,
  createDatabase,
  type DatabaseOptions,
  type MigrationsTable,
  type SqlDialect,
  type ThreadsTable,
} from "./database.js";
export { appliedMigrations, MIGRATIONS_TABLE, type Migration, runMigrations } from "./migrations.js";
export {
  type CreateRunInput,
  createRunStore,
  RUNS_TABLE,
  type RunRecord,
  type RunStatus,
  type RunStore,
  type RunsTable,
  runRecordMigrations,
} from "./runs.js";
export {
  createThreadStore,
  type ListThreadsOptions,
  THREADS_TABLE,
  type ThreadRecord,
  type ThreadStore,
  type ThreadStoreOptions,
  type TouchThreadOptions,
  threadMigrations,
} from "./threads.js";
export {
  DEFAULT_UPLOAD_MAX_BYTES,
  DEFAULT_UPLOAD_MAX_FILES,
  listUploads,
  type SaveUploadOptions,
  sanitizeUploadName,
  saveUpload,
  type UploadRecord,
} from "./uploads.js";
