import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, posix } from "node:path";

/**
 * The thread's sandbox sync ledger, `<thread>/.sandbox-sync.json`: which host files a sync wrote, from which
 * sandbox generation (the remote sandbox id), with the SHA-256 of the bytes written. `view_image` and
 * `present_files` (in `@antler/plugin-runtime`) read it: once that generation is gone, a host copy is used only
 * while it still has the recorded hash. Format, version 1:
 * `{ "version": 1, "files": { "<virtual path>": { "sha256", "size", "generation" } } }`.
 */
export const SANDBOX_SYNC_LEDGER_FILE = ".sandbox-sync.json";

export interface LedgerEntry {
  sha256: string;
  size: number;
  generation: string;
}

async function load(path: string): Promise<Record<string, LedgerEntry>> {
  try {
    const raw = JSON.parse(await readFile(path, "utf8")) as { version?: unknown; files?: unknown };
    if (raw.version === 1 && raw.files !== null && typeof raw.files === "object") return { ...(raw.files as Record<string, LedgerEntry>) };
  } catch {
    // Missing or unreadable: rebuilt from what this sync knows.
  }
  return {};
}

/**
 * Records one sync pass: `synced` (path under `virtualRoot` → host hash and size, from `generation`) replaces the
 * entries of those paths; `pruned` paths are dropped. Entries of earlier generations for other paths stay, since
 * their host copies stay too. Written through a temporary file and a rename.
 */
export async function recordSync(
  ledgerPath: string,
  update: { generation: string; virtualRoot: string; synced: Record<string, { sha256: string; size: number }>; pruned: readonly string[] },
): Promise<void> {
  const files = await load(ledgerPath);
  for (const rel of update.pruned) delete files[posix.join(update.virtualRoot, rel)];
  for (const [rel, host] of Object.entries(update.synced)) {
    files[posix.join(update.virtualRoot, rel)] = { sha256: host.sha256, size: host.size, generation: update.generation };
  }
  await mkdir(dirname(ledgerPath), { recursive: true });
  const tmp = join(dirname(ledgerPath), `.${basename(ledgerPath)}.${randomUUID().slice(0, 8)}.tmp`);
  try {
    await writeFile(tmp, `${JSON.stringify({ version: 1, files }, null, 2)}\n`);
    await rename(tmp, ledgerPath);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
