import { open } from "node:fs/promises";
import { join } from "node:path";
import type { ScannedFile, ScanOutcome } from "./scan.js";

/** One changed file; `path` is the virtual path the agent uses (`/mnt/user-data/workspace/…`). */
export interface FileChange {
  path: string;
  size?: number;
  /** Unified diff (text files both before and after, within the caps). */
  diff?: string;
  /** Why no diff is given (binary, over the text cap, over the record's diff budget). */
  diff_omitted?: string;
}

/** What one run changed in the thread's workspace and outputs. */
export interface WorkspaceChanges {
  run_id: string;
  thread_id: string;
  added: FileChange[];
  modified: FileChange[];
  deleted: FileChange[];
  /** Set when a scan was cut short (file count, bytes or time): the lists may then be incomplete. */
  truncated?: string;
}

export interface ChangesOptions {
  runId: string;
  threadId: string;
  /** Root name → virtual folder, e.g. `{ workspace: "/mnt/user-data/workspace" }`. */
  virtualRoots: Record<string, string>;
  /** Total diff text kept in one record; default 64 KiB. */
  maxDiffBytes?: number;
  /** Files with more lines than this get no diff; default 2000. */
  maxDiffLines?: number;
}

type Done = Extract<ScanOutcome, { status: "done" }>;

function virtualPath(key: string, roots: Record<string, string>): string {
  const slash = key.indexOf("/");
  const root = roots[key.slice(0, slash)] ?? `/${key.slice(0, slash)}`;
  return `${root}/${key.slice(slash + 1)}`;
}

async function cached(scan: Done, file: ScannedFile): Promise<string | undefined> {
  if (!scan.cacheDir || !file.text_cache) return undefined;
  const { offset, length } = file.text_cache;
  const handle = await open(join(scan.cacheDir, "texts.bin"), "r").catch(() => undefined);
  if (!handle) return undefined;
  try {
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, offset);
    return buffer.toString("utf8");
  } finally {
    await handle.close();
  }
}

/** Compares a start and an end scan into a `workspace_changes` record. */
export async function computeChanges(start: Done, end: Done, options: ChangesOptions): Promise<WorkspaceChanges> {
  const budget = { left: options.maxDiffBytes ?? 64 * 1024 };
  const maxLines = options.maxDiffLines ?? 2000;
  const added: FileChange[] = [];
  const modified: FileChange[] = [];
  const deleted: FileChange[] = [];
  for (const [key, file] of Object.entries(end.files)) {
    const before = start.files[key];
    const path = virtualPath(key, options.virtualRoots);
    if (!before) {
      added.push({ path, size: file.size });
      continue;
    }
    if (before.sha256 === file.sha256) continue;
    const change: FileChange = { path, size: file.size };
    const [a, b] = await Promise.all([cached(start, before), cached(end, file)]);
    if (a === undefined || b === undefined) {
      change.diff_omitted = "not a text file under the text cap";
    } else {
      const diff = unifiedDiff(a, b, path, maxLines);
      if (diff === undefined) change.diff_omitted = `more than ${maxLines} lines`;
      else if (Buffer.byteLength(diff) > budget.left) change.diff_omitted = "the record's diff budget is used up";
      else {
        budget.left -= Buffer.byteLength(diff);
        change.diff = diff;
      }
    }
    modified.push(change);
  }
  for (const [key, file] of Object.entries(start.files)) {
    if (!end.files[key]) deleted.push({ path: virtualPath(key, options.virtualRoots), size: file.size });
  }
  const truncated = start.truncated ?? end.truncated;
  return {
    run_id: options.runId,
    thread_id: options.threadId,
    added,
    modified,
    deleted,
    ...(truncated ? { truncated } : {}),
  };
}

/** A unified diff with three lines of context, or undefined when either side has more than `maxLines` lines. */
export function unifiedDiff(before: string, after: string, path: string, maxLines = 2000): string | undefined {
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length > maxLines || b.length > maxLines) return undefined;
  // Longest common subsequence table, from the end.
  const n = a.length;
  const m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  type Op = { kind: " " | "-" | "+"; text: string; ai: number; bi: number };
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) ops.push({ kind: " ", text: a[i++] as string, ai: i, bi: ++j });
    // Removals before additions, as diff(1) prints them.
    else if (i < n && (j >= m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push({ kind: "-", text: a[i++] as string, ai: i, bi: j });
    else ops.push({ kind: "+", text: b[j++] as string, ai: i, bi: j });
  }
  const context = 3;
  const lines = [`--- a${path}`, `+++ b${path}`];
  let k = 0;
  while (k < ops.length) {
    if (ops[k]?.kind === " ") {
      k++;
      continue;
    }
    let start = Math.max(0, k - context);
    let end = k;
    // Extend the hunk while changes are within 2 * context lines of each other.
    for (let q = k; q < ops.length; q++) {
      if (ops[q]?.kind !== " ") end = q;
      else if (q - end > 2 * context) break;
    }
    end = Math.min(ops.length - 1, end + context);
    const hunk = ops.slice(start, end + 1);
    const aStart = hunk.findIndex((o) => o.kind !== "+");
    const bStart = hunk.findIndex((o) => o.kind !== "-");
    const aCount = hunk.filter((o) => o.kind !== "+").length;
    const bCount = hunk.filter((o) => o.kind !== "-").length;
    const aLine = aStart >= 0 ? (hunk[aStart]?.ai ?? 0) : (hunk[0]?.ai ?? 0);
    const bLine = bStart >= 0 ? (hunk[bStart]?.bi ?? 0) : (hunk[0]?.bi ?? 0);
    lines.push(`@@ -${aCount === 0 ? aLine : aLine},${aCount} +${bCount === 0 ? bLine : bLine},${bCount} @@`);
    for (const o of hunk) lines.push(`${o.kind}${o.text}`);
    k = end + 1;
    start = k;
  }
  return `${lines.join("\n")}\n`;
}
