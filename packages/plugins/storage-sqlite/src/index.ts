export { SQLITE_DRIVER_PACKAGE, sqliteDriver } from "./driver.js";
export { SqliteMessageLog } from "./message-log.js";
export { default } from "./plugin.js";
export { AntlerSqliteSaver, SqliteCheckpointTables } from "./retention.js";
export {
  ANTLER_SQLITE_FILE,
  CHECKPOINTS_SQLITE_FILE,
  openSqliteCheckpointer,
  openSqliteDatabase,
  openSqliteFile,
  type SqliteCheckpointer,
  type SqliteCheckpointerOptions,
  sqliteDirectory,
} from "./sqlite.js";
