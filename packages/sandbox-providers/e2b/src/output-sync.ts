import { createHash, randomUUID } from "node:crypto";
import type { Stats } from "node:fs";
import { lstat, mkdir, readFile, realpath, rename, rm, rmdir, stat, writeFile } from "node:fs/promises";
import { dirname, join, posix } from "node:path";
import { isWithin, type Logger, VIRTUAL_DIRS } from "@antler/kernel";
import { recordSync } from "./ledger.js";
import { type HostMeta, loadManifest, type RemoteVersion, type SyncManifest, type SyncManifestEntry, saveManifest } from "./manifest.js";
import type { RemoteEntry, RemoteSandbox } from "./remote.js";

export interface SyncLimits {
  /** Per file: larger files are never downloaded. */
  maxFileBytes: number;
  /** Per pass: bytes downloaded. */
  maxTotalBytes: number;
  /** Per pass: files downloaded. */
  maxFiles: number;
  /** Per pass: milliseconds from the start of the pass. */
  deadlineMs: number;
}

export interface OutputSyncOptions {
  remote: RemoteSandbox;
  /** Remote folder to mirror. Default `/mnt/user-data/outputs`. */
  remoteDir?: string;
  /** Host folder that receives the files (the thread's `user-data/outputs`). */
  hostDir: string;
  manifestPath: string;
  /** The thread's sync ledger (`.sandbox-sync.json`); each pass records the generation and hash of what it wrote. */
  ledgerPath?: string;
  limits: SyncLimits;
  logger?: Logger;
  /** Clock for the deadline; default `Date.now`. */
  now?: () => number;
  /** Listing depth; a folder at this depth makes the listing incomplete. Default 32. */
  listDepth?: number;
}

export type DropReason = "deadline" | "max_total_bytes" | "max_files" | "error";

export interface DroppedFile {
  path: string;
  reason: DropReason;
  /** Set for `error`. */
  message?: string;
}

export interface OutputSyncReport {
  sandboxId: string;
  /** True when the listing was complete and nothing was dropped, so deleted files were pruned. */
  complete: boolean;
  downloaded: string[];
  unchanged: string[];
  /** Manifest entries removed because the remote file is gone. */
  pruned: string[];
  /** Files this pass should have downloaded but did not; retried on the next pass. */
  dropped: DroppedFile[];
  /** Larger than `maxFileBytes`; skipped every pass. */
  tooLarge: string[];
  /** Remote entries whose name could not be placed safely under the host folder. */
  unsafe: string[];
  bytes: number;
  /** Why an existing manifest was not used, if it was not. */
  manifestDiscarded: "other_sandbox" | "invalid" | null;
  /** Set when the remote folder could not be listed; nothing else happened. */
  listError?: string;
}

const DEFAULT_LIST_DEPTH = 32;

/**
 * One bounded pass that mirrors the remote outputs folder into the host outputs folder.
 *
 * Invariants:
 * - A file is downloaded only when its remote version (size, mtime) differs from the manifest, or the host copy
 *   no longer matches the metadata recorded right after the last download. The recorded host metadata is what
 *   the host filesystem actually stored, so mtime rounding on the host never triggers a re-download.
 * - Deleted remote files are pruned only after a complete pass (complete listing, nothing dropped). A pass
 *   that stops short reconciles only what it observed, so skipped files are retried, never forgotten.
 * - Only host copies the sync created, and that still match what it wrote, are deleted on prune.
 */
export async function syncOutputs(options: OutputSyncOptions): Promise<OutputSyncReport> {
  const { remote, hostDir, manifestPath, limits, logger } = options;
  const remoteDir = posix.resolve("/", options.remoteDir ?? VIRTUAL_DIRS.outputs);
  const now = options.now ?? Date.now;
  const listDepth = options.listDepth ?? DEFAULT_LIST_DEPTH;
  const deadlineAt = now() + limits.deadlineMs;
  const sandboxId = remote.sandboxId;
  const report: OutputSyncReport = {
    sandboxId,
    complete: false,
    downloaded: [],
    unchanged: [],
    pruned: [],
    dropped: [],
    tooLarge: [],
    unsafe: [],
    bytes: 0,
    manifestDiscarded: null,
  };

  const loaded = await loadManifest(manifestPath, sandboxId);
  let previous: Record<string, SyncManifestEntry> = {};
  if (loaded.status === "ok") previous = loaded.manifest.files;
  else if (loaded.status === "other_sandbox") {
    report.manifestDiscarded = "other_sandbox";
    logger?.info(
      { sandboxId, manifestSandboxId: loaded.sandboxId },
      "e2b output sync: manifest belongs to another sandbox; starting afresh",
    );
  } else if (loaded.status === "invalid") {
    report.manifestDiscarded = "invalid";
    logger?.warn({ sandboxId, reason: loaded.reason }, "e2b output sync: manifest unreadable; starting afresh");
  }

  let listing: RemoteEntry[];
  try {
    listing = await remote.list(remoteDir, listDepth);
  } catch (err) {
    // Without a listing nothing can be reconciled; keep the manifest as it is for the next pass.
    report.listError = (err as Error).message;
    logger?.warn({ sandboxId, remoteDir, err: report.listError }, "e2b output sync: cannot list the remote outputs folder; nothing synced");
    return report;
  }

  let listingComplete = true;
  const files: Array<{ rel: string; entry: RemoteEntry }> = [];
  for (const entry of listing) {
    const rel = relativeRemotePath(remoteDir, entry.path);
    if (rel === null) {
      report.unsafe.push(entry.path);
      continue;
    }
    if (entry.type === "dir") {
      if (rel.split("/").length >= listDepth) listingComplete = false;
      continue;
    }
    // Symlinks are not followed: their target is outside what the agent meant to publish, or a loop.
    if (entry.type === "file") files.push({ rel, entry });
  }
  files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));

  const next: Record<string, SyncManifestEntry> = {};
  const observed = new Set<string>();
  let realHostDir: string | null = null;

  for (const { rel, entry } of files) {
    observed.add(rel);
    const old = previous[rel];
    const version: RemoteVersion = { size: entry.size, mtimeMs: entry.mtimeMs };
    const target = join(hostDir, ...rel.split("/"));
    if (!isWithin(hostDir, target)) {
      report.unsafe.push(rel);
      if (old) next[rel] = old;
      continue;
    }
    const hostStat = await lstatOrNull(target);
    if (hostStat?.isSymbolicLink()) {
      // Writing through a symlink could land outside the outputs folder.
      report.unsafe.push(rel);
      if (old) next[rel] = old;
      continue;
    }

    if (old && sameRemote(old.remote, version) && hostStat?.isFile()) {
      if (sameHost(old.host, hostStat)) {
        next[rel] = old;
        report.unchanged.push(rel);
        continue;
      }
      if (hostStat.size === old.host.size && (await sha256File(target)) === old.host.sha256) {
        // Touched but identical (a copy tool, a backup restore): refresh the recorded metadata instead of downloading.
        next[rel] = { ...old, host: { ...old.host, mtimeMs: hostStat.mtimeMs } };
        report.unchanged.push(rel);
        continue;
      }
    }

    if (entry.size > limits.maxFileBytes) {
      report.tooLarge.push(rel);
      if (old) next[rel] = old;
      continue;
    }
    const drop = (reason: DropReason, message?: string): void => {
      report.dropped.push(message === undefined ? { path: rel, reason } : { path: rel, reason, message });
      if (old) next[rel] = old;
    };
    if (now() >= deadlineAt) {
      drop("deadline");
      continue;
    }
    if (report.downloaded.length >= limits.maxFiles) {
      drop("max_files");
      continue;
    }
    if (report.bytes + entry.size > limits.maxTotalBytes) {
      drop("max_total_bytes");
      continue;
    }

    let bytes: Uint8Array;
    const remaining = Math.max(1, deadlineAt - now());
    try {
      bytes = await remote.readFile(entry.path, { signal: AbortSignal.timeout(remaining) });
    } catch (err) {
      if (isAbort(err) || now() >= deadlineAt) drop("deadline");
      else drop("error", (err as Error).message);
      continue;
    }
    // The file may have grown between listing and reading.
    if (bytes.byteLength > limits.maxFileBytes) {
      report.tooLarge.push(rel);
      if (old) next[rel] = old;
      continue;
    }
    if (report.bytes + bytes.byteLength > limits.maxTotalBytes) {
      drop("max_total_bytes");
      continue;
    }

    try {
      realHostDir ??= await ensureDir(hostDir);
      const host = await writeHostFile(realHostDir, hostDir, target, bytes);
      // A file the sync did not create (already there, e.g. written on the host) is never deleted by a prune.
      const created = old ? old.created : hostStat === null;
      next[rel] = { remote: version, host, created };
      report.downloaded.push(rel);
      report.bytes += bytes.byteLength;
    } catch (err) {
      drop("error", (err as Error).message);
    }
  }

  report.complete = listingComplete && report.dropped.length === 0;
  if (report.complete) {
    for (const [rel, entry] of Object.entries(previous)) {
      if (observed.has(rel)) continue;
      report.pruned.push(rel);
      if (entry.created) await removeHostCopy(hostDir, rel, entry.host);
    }
  } else {
    // Un-pruned: entries not observed (or not reached) this pass stay as they were.
    for (const [rel, entry] of Object.entries(previous)) if (!(rel in next)) next[rel] = entry;
  }

  const manifest: SyncManifest = { version: 1, sandboxId, files: next };
  await saveManifest(manifestPath, manifest);
  if (options.ledgerPath !== undefined) {
    // Every manifest entry's host bytes came from this sandbox: downloaded now or in an earlier pass of it.
    const synced = Object.fromEntries(Object.entries(next).map(([rel, e]) => [rel, { sha256: e.host.sha256, size: e.host.size }]));
    await recordSync(options.ledgerPath, { generation: sandboxId, virtualRoot: remoteDir, synced, pruned: report.pruned });
  }

  if (report.dropped.length > 0) {
    logger?.warn(
      {
        sandboxId,
        dropped: report.dropped.map((d) => d.path),
        reasons: report.dropped.map((d) => d.reason),
        downloaded: report.downloaded.length,
        bytes: report.bytes,
      },
      `e2b output sync stopped short: ${report.dropped.length} file(s) not downloaded (${report.dropped.map((d) => `${d.path}: ${d.reason}`).join(", ")}); they are retried on the next release`,
    );
  }
  if (report.tooLarge.length > 0) {
    logger?.warn(
      { sandboxId, tooLarge: report.tooLarge, maxFileBytes: limits.maxFileBytes },
      `e2b output sync skipped files larger than max_file_bytes: ${report.tooLarge.join(", ")}`,
    );
  }
  if (report.unsafe.length > 0)
    logger?.warn({ sandboxId, unsafe: report.unsafe }, "e2b output sync skipped entries it cannot place safely");
  logger?.debug(
    {
      sandboxId,
      downloaded: report.downloaded.length,
      unchanged: report.unchanged.length,
      pruned: report.pruned.length,
      complete: report.complete,
    },
    "e2b output sync done",
  );
  return report;
}

function relativeRemotePath(remoteDir: string, path: string): string | null {
  if (path.includes("\0")) return null;
  const rel = posix.relative(remoteDir, posix.resolve("/", path));
  if (rel === "" || rel.startsWith("../") || rel === ".." || posix.isAbsolute(rel)) return null;
  return rel;
}

function sameRemote(a: RemoteVersion, b: RemoteVersion): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs;
}

function sameHost(recorded: HostMeta, current: Stats): boolean {
  return current.size === recorded.size && current.mtimeMs === recorded.mtimeMs;
}

async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ENOTDIR") return null;
    throw err;
  }
}

async function sha256File(path: string): Promise<string> {
  return createHash("sha256")
    .update(await readFile(path))
    .digest("hex");
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === "AbortError" || err.name === "TimeoutError");
}

async function ensureDir(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  return realpath(dir);
}

/** Writes via a temporary sibling and a rename; refuses a parent that resolves outside the outputs folder. */
async function writeHostFile(realHostDir: string, hostDir: string, target: string, bytes: Uint8Array): Promise<HostMeta> {
  const parent = dirname(target);
  await mkdir(parent, { recursive: true });
  const realParent = await realpath(parent);
  if (!isWithin(realHostDir, realParent)) throw new Error(`${parent} resolves outside ${hostDir}`);
  const tmp = join(realParent, `.e2b-sync-${randomUUID().slice(0, 8)}.tmp`);
  try {
    await writeFile(tmp, bytes);
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  const info = await stat(target);
  return { size: info.size, mtimeMs: info.mtimeMs, sha256: createHash("sha256").update(bytes).digest("hex") };
}

/** Deletes a sync-created host copy if it still is what the sync wrote, then any folders that became empty. */
async function removeHostCopy(hostDir: string, rel: string, recorded: HostMeta): Promise<void> {
  const target = join(hostDir, ...rel.split("/"));
  if (!isWithin(hostDir, target)) return;
  const info = await lstatOrNull(target);
  if (!info?.isFile()) return;
  if (!sameHost(recorded, info) && (info.size !== recorded.size || (await sha256File(target)) !== recorded.sha256)) return;
  await rm(target, { force: true });
  let folder = dirname(target);
  while (folder !== hostDir && isWithin(hostDir, folder)) {
    try {
      await rmdir(folder);
    } catch {
      break;
    }
    folder = dirname(folder);
  }
}
