import { posix } from "node:path";
import { READ_ONLY_ROOTS, SANDBOX_VIRTUAL_ROOTS } from "@antler/kernel";

/**
 * The canonical form of a path the model gave: absolute (relative paths are taken from the workspace), `.` and
 * `..` resolved, no trailing slash. Read stamps and path locks are keyed by it, so `a//b` and `a/./b` are one file.
 * Escapes are not judged here; the provider refuses anything outside its roots.
 */
export function normalizeVirtualPath(path: string): string {
  const trimmed = path.trim();
  return trimmed.startsWith("/") ? posix.resolve(trimmed) : posix.resolve(SANDBOX_VIRTUAL_ROOTS.workspace, trimmed);
}

/** The read-only root (`/mnt/skills`, `/mnt/acp-workspace`) a normalized path lies under, if any. */
export function readOnlyRootOf(normalized: string): string | undefined {
  return READ_ONLY_ROOTS.find((root) => normalized === root || normalized.startsWith(`${root}/`));
}
