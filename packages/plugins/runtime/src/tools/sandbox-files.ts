import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, readFile, stat } from "node:fs/promises";
import { join, posix } from "node:path";
import { resolveVirtualPath, type Sandbox, type ThreadPaths, VIRTUAL_DIRS } from "@antler/kernel";
import { describeError } from "./tool-runtime.js";

/**
 * Reading a thread's files where they really are. A remote sandbox (E2B, AIO from a provisioner) holds the files
 * the agent made this turn; the host folders only get them when the provider synchronizes (E2B: at release). The
 * rule (seed 000, `view_image`):
 *
 * - While the sandbox generation that made a file is alive, its live bytes win.
 * - A replacement sandbox (a new generation: the old VM died, or the process restarted) never vouches for files
 *   of the old one. Those are served only from the host copy a sync wrote, and only while that copy's SHA-256
 *   still matches the hash the sync recorded in the thread's sync ledger; a mismatch is refused, never served.
 * - Host files no sync wrote (uploads, files of a provider that mounts the host folders) are the host's own.
 */

/** The sync ledger in the thread folder: which host files a provider synchronized from which sandbox generation. */
export const SANDBOX_SYNC_LEDGER_FILE = ".sandbox-sync.json";

/** One synchronized file of the ledger, keyed by virtual path. */
export interface SyncLedgerEntry {
  sha256: string;
  size: number;
  /** The sandbox generation the bytes came from. */
  generation: string;
}

/** Finds a sandbox that is live in this process by its id (the provider's `get`). */
export type LiveSandboxLookup = (sandboxId: string) => Sandbox | undefined;

export type ThreadFileRead =
  | { ok: true; bytes: Buffer; source: "sandbox" | "host"; generation?: string }
  | {
      ok: false;
      kind: "missing" | "not_file" | "empty" | "too_large" | "unreadable" | "unverified" | "outside";
      reason: string;
      size?: number;
    };

export type ThreadFileProbe = { ok: true; source: "sandbox" | "host" } | { ok: false; reason: string };

type VirtualDir = keyof typeof VIRTUAL_DIRS;

export interface ThreadFileOptions {
  paths: ThreadPaths;
  /** Absolute virtual path. */
  virtualPath: string;
  /** Virtual folders the caller may read. */
  allowed: readonly VirtualDir[];
  /** The run's live sandbox, if it holds one. */
  live?: Sandbox | undefined;
}

/** The sandbox id the run's state (written by the Sandbox middleware) or context names, if any. */
export function runSandboxId(state: unknown, context: unknown): string | undefined {
  const fromState = (state as { sandbox?: { sandbox_id?: unknown } } | null | undefined)?.sandbox?.sandbox_id;
  if (typeof fromState === "string" && fromState !== "") return fromState;
  const fromContext = (context as { sandbox_id?: unknown } | null | undefined)?.sandbox_id;
  return typeof fromContext === "string" && fromContext !== "" ? fromContext : undefined;
}

/** The run's sandbox if it is live in this process; a provider that cannot be reached counts as none. */
export function liveSandbox(lookup: LiveSandboxLookup | undefined, state: unknown, context: unknown): Sandbox | undefined {
  const id = runSandboxId(state, context);
  if (lookup === undefined || id === undefined) return undefined;
  try {
    return lookup(id);
  } catch {
    return undefined;
  }
}

type Ledger = { ok: true; files: Record<string, SyncLedgerEntry> } | { ok: false; reason: string };

const entryShape = (v: unknown): v is SyncLedgerEntry => {
  const e = v as Partial<SyncLedgerEntry> | null;
  return (
    typeof e === "object" &&
    e !== null &&
    typeof e.sha256 === "string" &&
    /^[0-9a-f]{64}$/.test(e.sha256) &&
    typeof e.size === "number" &&
    typeof e.generation === "string"
  );
};

/** The thread's sync ledger; absent means nothing was ever synchronized. */
export async function loadSyncLedger(paths: ThreadPaths): Promise<Ledger> {
  let text: string;
  try {
    text = await readFile(join(paths.threadDir, SANDBOX_SYNC_LEDGER_FILE), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { ok: true, files: {} };
    return { ok: false, reason: describeError(err) };
  }
  try {
    const raw = JSON.parse(text) as { version?: unknown; files?: unknown };
    if (raw.version !== 1 || raw.files === null || typeof raw.files !== "object") return { ok: false, reason: "not a version 1 ledger" };
    const files: Record<string, SyncLedgerEntry> = {};
    for (const [path, entry] of Object.entries(raw.files as Record<string, unknown>)) {
      if (!entryShape(entry)) return { ok: false, reason: `bad entry for ${path}` };
      files[path] = entry;
    }
    return { ok: true, files };
  } catch (err) {
    return { ok: false, reason: `not JSON: ${describeError(err)}` };
  }
}

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

function looksMissing(err: unknown): boolean {
  const e = err as { code?: unknown; details?: { errno?: unknown } } | null;
  const code = e?.details?.errno ?? e?.code;
  if (code === "ENOENT" || code === "ENOTDIR" || code === "ANTLER_ERR_SANDBOX_NOT_FOUND") return true;
  return /not found|no such|does not exist|ENOENT/i.test(describeError(err));
}

/** The lexical check the host resolution also makes, done first so a live sandbox is never asked for other folders. */
function outsideAllowed(virtualPath: string, allowed: readonly VirtualDir[]): boolean {
  return !allowed.some((d) => virtualPath.startsWith(`${VIRTUAL_DIRS[d]}/`));
}

const MISSING = { ok: false, kind: "missing", reason: "the file does not exist. Check the path (list the folder first)." } as const;

/** The live sandbox's bytes, or `absent` when it has no such file. Size is checked before the download. */
async function readLive(sandbox: Sandbox, virtualPath: string, maxBytes: number): Promise<ThreadFileRead | "absent"> {
  let entries: Awaited<ReturnType<Sandbox["listDir"]>>;
  try {
    entries = await sandbox.listDir(posix.dirname(virtualPath), 1);
  } catch (err) {
    if (looksMissing(err)) return "absent";
    return { ok: false, kind: "unreadable", reason: `the sandbox could not list its folder (${describeError(err)}).` };
  }
  const entry = entries.find((e) => posix.resolve(e.path) === virtualPath);
  if (!entry) return "absent";
  if (entry.type === "directory") return { ok: false, kind: "not_file", reason: "it is a folder, not a file." };
  if (entry.type === "file" && entry.size > maxBytes) return { ok: false, kind: "too_large", reason: "too large", size: entry.size };
  let bytes: Buffer;
  try {
    bytes = Buffer.from(await sandbox.downloadFile(virtualPath));
  } catch (err) {
    if (looksMissing(err)) return "absent";
    return { ok: false, kind: "unreadable", reason: `the sandbox could not read it (${describeError(err)}).` };
  }
  if (bytes.length > maxBytes) return { ok: false, kind: "too_large", reason: "too large", size: bytes.length };
  if (bytes.length === 0) return { ok: false, kind: "empty", reason: "the file is empty." };
  return { ok: true, bytes, source: "sandbox", ...(sandbox.generation !== undefined ? { generation: sandbox.generation } : {}) };
}

/**
 * Host bytes, checked against the sync ledger: a file a sync wrote must still hash to what the sync recorded.
 * `fromGeneration`: the bytes are wanted in place of a sandbox generation that is gone, so only a synchronized
 * (ledger-listed) copy will do.
 */
async function readHost(options: ThreadFileOptions, maxBytes: number, fromGeneration?: string): Promise<ThreadFileRead> {
  const { paths, virtualPath, allowed } = options;
  let host: string;
  try {
    host = resolveVirtualPath(paths, virtualPath, allowed);
  } catch (err) {
    return { ok: false, kind: "outside", reason: `${describeError(err)}.` };
  }
  let bytes: Buffer;
  try {
    // Size and bytes come from one open handle, so a file swapped between the check and the read is not read past the cap.
    const handle = await open(host, "r");
    try {
      const info = await handle.stat();
      if (!info.isFile()) return { ok: false, kind: "not_file", reason: "it is not a regular file." };
      if (info.size === 0) return { ok: false, kind: "empty", reason: "the file is empty." };
      if (info.size > maxBytes) return { ok: false, kind: "too_large", reason: "too large", size: info.size };
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      if (fromGeneration !== undefined) return goneGeneration(fromGeneration);
      return MISSING;
    }
    if (code === "EISDIR") return { ok: false, kind: "not_file", reason: "it is a folder, not a file." };
    return { ok: false, kind: "unreadable", reason: `the file could not be read (${describeError(err)}).` };
  }
  if (bytes.length > maxBytes) return { ok: false, kind: "too_large", reason: "too large", size: bytes.length };
  const verified = await verifySynced(paths, virtualPath, bytes, fromGeneration);
  if (!verified.ok) return verified;
  return { ok: true, bytes, source: "host", ...(verified.generation !== undefined ? { generation: verified.generation } : {}) };
}

function goneGeneration(generation: string): ThreadFileRead {
  return {
    ok: false,
    kind: "unverified",
    reason:
      `it was made in sandbox generation ${generation}, which has been replaced, and no synchronized copy of it was ` +
      "recorded on the host. Make the file again in the current sandbox.",
  };
}

async function verifySynced(
  paths: ThreadPaths,
  virtualPath: string,
  bytes: Uint8Array,
  fromGeneration: string | undefined,
): Promise<{ ok: true; generation?: string } | Extract<ThreadFileRead, { ok: false }>> {
  const ledger = await loadSyncLedger(paths);
  if (!ledger.ok) return { ok: false, kind: "unverified", reason: ledgerUnreadable(ledger.reason) };
  const entry = ledger.files[virtualPath];
  if (entry === undefined) return fromGeneration !== undefined ? goneGeneration(fromGeneration) : { ok: true };
  if (sha256(bytes) !== entry.sha256) return { ok: false, kind: "unverified", reason: changedAfterSync(entry) };
  return { ok: true, generation: entry.generation };
}

function ledgerUnreadable(reason: string): string {
  return (
    `the thread's sandbox sync ledger (${SANDBOX_SYNC_LEDGER_FILE}) is unreadable (${reason}), so synchronized files cannot be ` +
    "verified. An operator should delete it; the next sync rewrites it."
  );
}

function changedAfterSync(entry: SyncLedgerEntry): string {
  return (
    `the host copy no longer matches what was synchronized from sandbox generation ${entry.generation} ` +
    "(its SHA-256 differs from the one recorded at sync time), so it is not used. Make the file again in the sandbox."
  );
}

/**
 * A thread file's bytes: the live sandbox's when it has the file, else the host's (verified against the sync
 * ledger). A file the live sandbox deleted after its own generation synced it is missing, not the stale copy.
 */
export async function readThreadFile(options: ThreadFileOptions & { maxBytes: number }): Promise<ThreadFileRead> {
  const { live, virtualPath, maxBytes } = options;
  if (live && !outsideAllowed(virtualPath, options.allowed)) {
    const read = await readLive(live, virtualPath, maxBytes);
    if (read !== "absent") return read;
    if (live.generation !== undefined) {
      const ledger = await loadSyncLedger(options.paths);
      if (ledger.ok && ledger.files[virtualPath]?.generation === live.generation) return MISSING;
    }
  }
  return readHost(options, maxBytes);
}

/**
 * The bytes of a file viewed earlier from sandbox generation `generation` (or from the host when undefined):
 * live bytes while that generation is the live one, else only SHA-256-verified synchronized host bytes.
 */
export async function rereadThreadFile(
  options: ThreadFileOptions & { maxBytes: number; generation: string | undefined },
): Promise<ThreadFileRead> {
  const { live, generation, virtualPath, maxBytes } = options;
  if (generation === undefined || outsideAllowed(virtualPath, options.allowed)) return readHost(options, maxBytes);
  if (live?.generation === generation) {
    const read = await readLive(live, virtualPath, maxBytes);
    return read === "absent" ? MISSING : read;
  }
  return readHost(options, maxBytes, generation);
}

/** Whether a regular file exists at the path, by the same rule as `readThreadFile` (for `present_files`). Downloads nothing. */
export async function probeThreadFile(options: ThreadFileOptions): Promise<ThreadFileProbe> {
  const { live, virtualPath, paths } = options;
  const notFile = { ok: false, reason: "is not a regular file (a folder or a device)" } as const;
  if (live && !outsideAllowed(virtualPath, options.allowed)) {
    let entries: Awaited<ReturnType<Sandbox["listDir"]>> = [];
    try {
      entries = await live.listDir(posix.dirname(virtualPath), 1);
    } catch (err) {
      if (!looksMissing(err)) return { ok: false, reason: `the sandbox could not list its folder (${describeError(err)})` };
    }
    const entry = entries.find((e) => posix.resolve(e.path) === virtualPath);
    if (entry) return entry.type === "directory" ? notFile : { ok: true, source: "sandbox" };
    if (live.generation !== undefined) {
      const ledger = await loadSyncLedger(paths);
      if (ledger.ok && ledger.files[virtualPath]?.generation === live.generation) return { ok: false, reason: "does not exist" };
    }
  }
  let host: string;
  try {
    host = resolveVirtualPath(paths, virtualPath, options.allowed);
  } catch (err) {
    // resolveVirtualPath refuses `..` escapes, other folders and symlinks whose target leaves the folder alike.
    return { ok: false, reason: describeError(err) };
  }
  try {
    if (!(await stat(host)).isFile()) return notFile;
  } catch {
    return { ok: false, reason: "does not exist" };
  }
  const ledger = await loadSyncLedger(paths);
  const entry = ledger.ok ? ledger.files[virtualPath] : undefined;
  if (!ledger.ok) return { ok: false, reason: ledgerUnreadable(ledger.reason).replace(/\.$/, "") };
  if (entry !== undefined && (await sha256File(host)) !== entry.sha256)
    return { ok: false, reason: changedAfterSync(entry).replace(/\.$/, "") };
  return { ok: true, source: "host" };
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
