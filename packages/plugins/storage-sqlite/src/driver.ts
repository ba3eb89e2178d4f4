import { createRequire } from "node:module";
import { AntlerError, describeCause, ErrorCodes } from "@antler/kernel";
import type BetterSqlite3 from "better-sqlite3";

/**
 * The better-sqlite3 build this Node loads. better-sqlite3 12 wraps its objects in the raw `node::ObjectWrap`, and
 * from Node 24.19 that header's destructor asserts on a live environment: a statement collected by the GC at the
 * wrong moment aborts the process (`Assertion failed: (env) != nullptr`). Release 13 is written on Node-API and is
 * safe there, but needs Node 22 or later. So Node 22 and up load 13 (installed under the alias
 * `better-sqlite3-napi`), Node 20 loads 12; both have the same JavaScript API.
 */
export const SQLITE_DRIVER_PACKAGE = Number(process.versions.node.split(".")[0]) >= 22 ? "better-sqlite3-napi" : "better-sqlite3";

let driver: typeof BetterSqlite3 | undefined;

/** The `Database` class of {@link SQLITE_DRIVER_PACKAGE}, loaded on first use. */
export function sqliteDriver(): typeof BetterSqlite3 {
  if (driver) return driver;
  try {
    driver = createRequire(import.meta.url)(SQLITE_DRIVER_PACKAGE) as typeof BetterSqlite3;
  } catch (cause) {
    throw new AntlerError(
      ErrorCodes.STORAGE_UNAVAILABLE,
      `cannot load the SQLite driver ${SQLITE_DRIVER_PACKAGE} on Node ${process.versions.node}: ${describeCause(cause)}`,
      {
        where: "storage.backend",
        hint: `Reinstall dependencies with this Node (npm rebuild ${SQLITE_DRIVER_PACKAGE}); its native part is built for one Node version.`,
        cause,
      },
    );
  }
  return driver;
}
