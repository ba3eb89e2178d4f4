import { randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { assertSafeId } from "@antler/kernel";
import { z } from "zod";

/** Custom agent names become folder names and config keys: lowercase letters, digits and `-`, 1–64 long. */
export const AGENT_NAME_PATTERN = /^[a-z0-9-]{1,64}$/;

export function isValidAgentName(name: string): boolean {
  return AGENT_NAME_PATTERN.test(name);
}

export const AGENT_SOUL_FILE = "SOUL.md";
export const AGENT_CONFIG_FILE = "config.yaml";

/** The folder of a user's custom agent: `<baseDir>/users/<user>/agents/<name>`. Throws on unusable ids. */
export function agentDir(baseDir: string, userId: string, name: string): string {
  return join(resolve(baseDir), "users", assertSafeId("user", userId), "agents", name);
}

/** A list of skill or tool-group names as the model sends it; `normalizeNameList` cleans it up. */
export const nameListSchema = (what: string) => z.array(z.string().max(128).describe(`One ${what} name.`)).max(256);

/** Trimmed, non-empty, single-line, de-duplicated in order. */
export function normalizeNameList(items: readonly string[]): string[] {
  return [...new Set(items.map((s) => s.trim()).filter((s) => s !== "" && !/[\r\n]/.test(s)))];
}

export interface FileWrite {
  /** Absolute target path; its folder must exist. */
  path: string;
  content: string;
  /** The content to put back if a later file of the same commit fails; `null` means the file did not exist. */
  previous?: string | null;
}

/**
 * The filesystem calls a commit makes, looked up on `fs.promises` at call time. Keeping them on that shared
 * object lets a test make one of them fail to exercise the rollback.
 */
const ops = fsp;

async function writeDurably(path: string, content: string): Promise<void> {
  const handle = await ops.open(path, "wx", 0o644);
  try {
    await handle.writeFile(content, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncFolder(dir: string): Promise<void> {
  try {
    const handle = await ops.open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Not every platform can fsync a folder; the renames are still atomic, only less durable across a crash.
  }
}

async function restore(path: string, content: string): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.restore.tmp`);
  try {
    await writeDurably(temp, content);
    await ops.rename(temp, path);
  } finally {
    await ops.rm(temp, { force: true }).catch(() => undefined);
  }
}

/**
 * Writes several files so that each one is replaced atomically (temp file in the same folder, fsync, rename) and
 * the set as a whole is all-or-nothing as far as this process can tell: when a rename fails, the files renamed
 * before it are restored to `previous` (or removed when they did not exist), and every temp file is deleted.
 */
export async function commitFiles(files: readonly FileWrite[]): Promise<void> {
  const temps = files.map((f) => join(dirname(f.path), `.${basename(f.path)}.${randomBytes(6).toString("hex")}.tmp`));
  const renamed: FileWrite[] = [];
  try {
    for (const [i, file] of files.entries()) await writeDurably(temps[i] as string, file.content);
    for (const [i, file] of files.entries()) {
      await ops.rename(temps[i] as string, file.path);
      renamed.push(file);
    }
  } catch (err) {
    await Promise.all(temps.map((t) => ops.rm(t, { force: true }).catch(() => undefined)));
    for (const file of renamed.reverse()) {
      try {
        if (file.previous === undefined || file.previous === null) await ops.rm(file.path, { force: true });
        else await restore(file.path, file.previous);
      } catch {
        // Best effort: the original error below is what the caller reports.
      }
    }
    throw err;
  }
  for (const dir of new Set(files.map((f) => dirname(f.path)))) await syncFolder(dir);
}

/** The content of a file, or `null` if there is none. Other read errors propagate. */
export async function readIfExists(path: string): Promise<string | null> {
  try {
    return await ops.readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}
