import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";

/** What one file looked like at scan time. */
export interface ScannedFile {
  size: number;
  mtime_ms: number;
  sha256: string;
  /** Text scans: where the file's content was copied in the scan's cache file (text files under the cap). */
  text_cache?: { offset: number; length: number };
}

export interface ScanLimits {
  /** Most files scanned; beyond it the scan is truncated. Default 5000. */
  maxFiles: number;
  /** Most bytes read; default 64 MiB. */
  maxBytes: number;
  /** Wall-clock budget; default 10 000 ms. */
  maxMs: number;
  /** Text scans copy only files up to this size (and without NUL bytes). Default 256 KiB. */
  textCapBytes: number;
  /** Pause after each file: paces low-priority scans (and lets tests hold a worker busy). Default 0. */
  delayPerFileMs: number;
}

export const DEFAULT_SCAN_LIMITS: ScanLimits = {
  maxFiles: 5000,
  maxBytes: 64 * 1024 * 1024,
  maxMs: 10_000,
  textCapBytes: 256 * 1024,
  delayPerFileMs: 0,
};

export type ScanOutcome =
  | {
      status: "done";
      /** Keyed by `<root name>/<relative path>`. */
      files: Record<string, ScannedFile>;
      /** Why the scan stopped early; absent when it saw everything. */
      truncated?: string;
      count: number;
      bytes: number;
      durationMs: number;
      /** Text scans: where the copies are. Removed by `dispose` (or by a cancel). */
      cacheDir?: string;
    }
  | { status: "cancelled"; stage: "prepare" | "running" }
  | { status: "failed"; error: string };

export interface ScanLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface ScanOptions {
  /** Root name → host folder, e.g. `{ workspace: "/…/user-data/workspace" }`. */
  roots: Record<string, string>;
  /** Also copy text files into a cache folder (for diffs); a metadata scan only hashes. */
  includeText: boolean;
  limits?: Partial<ScanLimits>;
  logger?: ScanLogger;
  /** Where text-scan cache folders are made; default the OS temp folder. */
  cacheParent?: string;
}

// The worker's program, as CommonJS source: it runs from `src` and `dist` alike (a worker cannot load .ts).
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const fs = require("node:fs");
const path = require("node:path");
const crypto = require("node:crypto");
const { roots, includeText, cacheDir, limits } = workerData;
const started = Date.now();
const files = {};
let count = 0, bytes = 0, truncated;
// One cache file per scan, appended to through one descriptor: a copy per file would cost an open and a close each.
const cacheFd = includeText ? fs.openSync(path.join(cacheDir, "texts.bin"), "w") : undefined;
let cacheOffset = 0;
const pause = new Int32Array(new SharedArrayBuffer(4));
function walk(rootName, dir, rel) {
  let entries;
  try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (truncated) return;
    const full = path.join(dir, e.name);
    const r = rel ? rel + "/" + e.name : e.name;
    if (e.isSymbolicLink()) continue;
    if (e.isDirectory()) { walk(rootName, full, r); continue; }
    if (!e.isFile()) continue;
    if (count >= limits.maxFiles) { truncated = "more than " + limits.maxFiles + " files"; return; }
    if (Date.now() - started > limits.maxMs) { truncated = "the scan took longer than " + limits.maxMs + " ms"; return; }
    let data, st;
    try { st = fs.statSync(full); } catch { continue; }
    if (bytes + st.size > limits.maxBytes) { truncated = "more than " + limits.maxBytes + " bytes"; return; }
    try { data = fs.readFileSync(full); } catch { continue; }
    bytes += data.length; count++;
    const key = rootName + "/" + r;
    const entry = { size: data.length, mtime_ms: st.mtimeMs, sha256: crypto.createHash("sha256").update(data).digest("hex") };
    if (includeText && data.length <= limits.textCapBytes && !data.includes(0)) {
      fs.writeSync(cacheFd, data);
      entry.text_cache = { offset: cacheOffset, length: data.length };
      cacheOffset += data.length;
    }
    files[key] = entry;
    if (limits.delayPerFileMs > 0) Atomics.wait(pause, 0, 0, limits.delayPerFileMs);
  }
}
for (const [name, dir] of Object.entries(roots)) walk(name, dir, "");
if (cacheFd !== undefined) fs.closeSync(cacheFd);
parentPort.postMessage({ files, truncated, count, bytes, durationMs: Date.now() - started });
`;

/**
 * One scan of a thread's folders in a worker thread (off the event loop), bounded by file count, bytes and time.
 *
 * Cancellation (seed 004, "Workspace Snapshot Cancellation"):
 * - during the prepare stage (before the roots are handed to the worker) the scan reclaims what it prepared:
 *   no worker starts and its cache folder is removed;
 * - after the handoff, cancelling a text scan waits for the worker to finish (drain) and only then removes the
 *   cache folder, which the worker may still be writing;
 * - after the handoff, cancelling a metadata scan (no cache) returns at once; the worker runs on, and its
 *   outcome is consumed and logged by a completion callback, so nothing is an unhandled rejection or lost.
 */
export class WorkspaceScan {
  stage: "prepare" | "running" | "done" = "prepare";
  /** Settles when the scan is over; never rejects. */
  readonly outcome: Promise<ScanOutcome>;
  /** Whether a worker was started (false when cancelled during prepare). */
  workerStarted = false;
  /** Whether the worker has finished (it may outlive a cancelled metadata scan). */
  workerExited = false;
  private cancelRequested = false;
  private cacheDir: string | undefined;
  private workerDone: Promise<ScanOutcome> | undefined;
  private readonly limits: ScanLimits;

  private constructor(private readonly options: ScanOptions) {
    this.limits = { ...DEFAULT_SCAN_LIMITS, ...options.limits };
    this.outcome = this.run();
  }

  static start(options: ScanOptions): WorkspaceScan {
    return new WorkspaceScan(options);
  }

  get includesText(): boolean {
    return this.options.includeText;
  }

  private async run(): Promise<ScanOutcome> {
    try {
      if (this.options.includeText) this.cacheDir = await mkdtemp(join(this.options.cacheParent ?? tmpdir(), "antler-ws-scan-"));
      // The handoff point: a cancel that came during prepare reclaims the roots and the cache here.
      if (this.cancelRequested) {
        await this.removeCache();
        this.stage = "done";
        return { status: "cancelled", stage: "prepare" };
      }
      this.stage = "running";
      this.workerStarted = true;
      this.workerDone = this.runWorker();
      const result = await this.workerDone;
      this.stage = "done";
      if (this.cancelRequested) return { status: "cancelled", stage: "running" };
      return result;
    } catch (err) {
      this.stage = "done";
      await this.removeCache().catch(() => undefined);
      return { status: "failed", error: err instanceof Error ? err.message : String(err) };
    }
  }

  private runWorker(): Promise<ScanOutcome> {
    return new Promise((resolve) => {
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { roots: this.options.roots, includeText: this.options.includeText, cacheDir: this.cacheDir, limits: this.limits },
      });
      let settled = false;
      const finish = (outcome: ScanOutcome) => {
        if (settled) return;
        settled = true;
        resolve(outcome);
      };
      worker.once("message", (m: Omit<Extract<ScanOutcome, { status: "done" }>, "status" | "cacheDir">) => {
        finish({ status: "done", ...m, ...(this.cacheDir ? { cacheDir: this.cacheDir } : {}) });
      });
      worker.once("error", (err) => finish({ status: "failed", error: err.message }));
      worker.once("exit", (code) => {
        this.workerExited = true;
        finish({ status: "failed", error: `the scan worker exited with code ${code} before reporting` });
      });
    });
  }

  /** Cancels the scan; see the class comment for what each stage waits for. */
  async cancel(): Promise<void> {
    if (this.stage === "done") {
      await this.dispose();
      return;
    }
    this.cancelRequested = true;
    if (this.stage === "prepare") {
      await this.outcome;
      return;
    }
    if (this.options.includeText) {
      // Drain: the worker may still write into the cache, so it goes only after the worker is done.
      const outcome = await this.outcome;
      await this.removeCache();
      this.options.logger?.info(
        { outcome: summarize(outcome) },
        "workspace text scan cancelled; the worker drained and its cache was removed",
      );
      return;
    }
    // Metadata scans own no cache: return now, and let the completion callback take the worker's outcome.
    void (this.workerDone ?? this.outcome).then(
      (outcome) =>
        this.options.logger?.info({ outcome: summarize(outcome) }, "cancelled workspace metadata scan finished in the background"),
      (err: unknown) => this.options.logger?.warn({ err }, "cancelled workspace metadata scan failed in the background"),
    );
  }

  /** Removes the text cache of a finished scan. */
  async dispose(): Promise<void> {
    await this.outcome;
    await this.removeCache();
  }

  private async removeCache(): Promise<void> {
    const dir = this.cacheDir;
    if (!dir) return;
    this.cacheDir = undefined;
    await rm(dir, { recursive: true, force: true });
  }

  /** The cache folder while it exists (tests). */
  get cacheFolder(): string | undefined {
    return this.cacheDir;
  }
}

function summarize(outcome: ScanOutcome): Record<string, unknown> {
  if (outcome.status === "done")
    return { status: "done", count: outcome.count, bytes: outcome.bytes, truncated: outcome.truncated ?? null };
  return { ...outcome };
}
