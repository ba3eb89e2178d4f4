import { realpathSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { AntlerError, ErrorCodes } from "./errors.js";

/** The folders the agent sees, as virtual paths. Tools speak these; hosts map them to real folders. */
export const VIRTUAL_ROOT = "/mnt/user-data";
export const VIRTUAL_DIRS = {
  workspace: `${VIRTUAL_ROOT}/workspace`,
  uploads: `${VIRTUAL_ROOT}/uploads`,
  outputs: `${VIRTUAL_ROOT}/outputs`,
} as const;
export type UserDataDir = keyof typeof VIRTUAL_DIRS;

export const DEFAULT_USER_ID = "default";

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;

/** User and thread ids become folder names, so they must be plain, bounded and free of path syntax. */
export function assertSafeId(kind: "user" | "thread", id: string): string {
  if (typeof id !== "string" || !SAFE_ID.test(id) || id.includes("..")) {
    throw new AntlerError(ErrorCodes.PATH_UNSAFE, `${kind} id ${JSON.stringify(id)} is not usable as a folder name`, {
      hint: "Use 1–128 characters of letters, digits, '.', '_', '@' and '-', starting with a letter or digit.",
    });
  }
  return id;
}

/** Host folders of one thread: `<base>/users/<user>/threads/<thread>/user-data/{workspace,uploads,outputs}`. */
export interface ThreadPaths {
  readonly userId: string;
  readonly threadId: string;
  readonly threadDir: string;
  readonly userData: string;
  readonly workspace: string;
  readonly uploads: string;
  readonly outputs: string;
}

// Hooks ask for a thread's folders on every model call; the answer never changes, so the most recently used
// are kept. Few of them: idle threads must not cost memory (the oldest entry goes when the map is full).
const recentThreadPaths = new Map<string, ThreadPaths>();
const RECENT_THREAD_PATHS = 256;

export function threadPaths(baseDir: string, userId: string, threadId: string): ThreadPaths {
  // A relative base follows the working directory, so the key is always absolute.
  const base = isAbsolute(baseDir) ? baseDir : resolve(baseDir);
  const key = `${base}\0${userId}\0${threadId}`;
  const known = recentThreadPaths.get(key);
  if (known) return known;
  const paths = computeThreadPaths(base, userId, threadId);
  if (recentThreadPaths.size >= RECENT_THREAD_PATHS) recentThreadPaths.delete(recentThreadPaths.keys().next().value as string);
  recentThreadPaths.set(key, paths);
  return paths;
}

// `join` returns a tree of string fragments; cached entries keep flat copies (0.7 KB instead of 3.9 KB).
const flat = (path: string): string => Buffer.from(path).toString();

function computeThreadPaths(baseDir: string, userId: string, threadId: string): ThreadPaths {
  const threadDir = flat(join(resolve(baseDir), "users", assertSafeId("user", userId), "threads", assertSafeId("thread", threadId)));
  const userData = flat(join(threadDir, "user-data"));
  return Object.freeze({
    userId,
    threadId,
    threadDir,
    userData,
    workspace: flat(join(userData, "workspace")),
    uploads: flat(join(userData, "uploads")),
    outputs: flat(join(userData, "outputs")),
  });
}

/** True when `child` is `parent` or inside it (string check; combine with realpath for symlinks). */
export function isWithin(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** Symlinks resolved; a path not there yet (a file about to be written, a root not created) stays as it is. */
function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Maps a virtual path under `/mnt/user-data/<dir>` to its host path for this thread. Refuses anything that
 * is not under one of the allowed virtual folders, and anything whose real path (symlinks resolved) leaves it.
 */
export function resolveVirtualPath(
  paths: ThreadPaths,
  virtualPath: string,
  allowed: readonly UserDataDir[] = ["workspace", "uploads", "outputs"],
): string {
  if (typeof virtualPath !== "string" || virtualPath.includes("\0")) {
    throw new AntlerError(ErrorCodes.PATH_UNSAFE, "path contains a NUL byte", { where: JSON.stringify(virtualPath) });
  }
  const normalized = virtualPath.startsWith("/") ? resolve(virtualPath) : virtualPath;
  for (const dir of allowed) {
    const root = VIRTUAL_DIRS[dir];
    if (normalized === root || normalized.startsWith(`${root}/`)) {
      const hostRoot = paths[dir];
      const host = resolve(hostRoot, `.${normalized.slice(root.length)}`);
      if (!isWithin(hostRoot, host) || !isWithin(realOrSelf(hostRoot), realOrSelf(host))) break;
      return host;
    }
  }
  const where = allowed.map((d) => VIRTUAL_DIRS[d]).join(", ");
  throw new AntlerError(ErrorCodes.PATH_UNSAFE, `path ${JSON.stringify(virtualPath)} is outside ${where}`, {
    hint: `Use a path under ${where}.`,
  });
}

/** Where a kernel's files are: what plugins get as `ctx.paths`. */
export interface PluginPaths {
  /** Folder of config.yaml (or the working directory without one). */
  readonly configDir: string;
  readonly configFile: string | null;
  /** Antler's data folder (`base_dir`, `.antler/` by default), absolute. */
  readonly baseDir: string;
}
