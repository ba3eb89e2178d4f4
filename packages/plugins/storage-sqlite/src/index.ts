export { default } from "./plugin.js";
export {
  ANTLER_SQLITE_FILE,
  CHECKPOINTS_SQLITE_FILE,
  openSqliteCheckpointer,
  openSqliteDatabase,
  openSqliteFile,
  sqliteDirectory,
} from "./sqlite.js";
