export { SqliteMessageLog } from "./message-log.js";
export { default } from "./plugin.js";
export {
  ANTLER_SQLITE_FILE,
  CHECKPOINTS_SQLITE_FILE,
  openSqliteCheckpointer,
  openSqliteDatabase,
  openSqliteFile,
  sqliteDirectory,
} from "./sqlite.js";
