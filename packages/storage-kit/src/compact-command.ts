import { parseArgs } from "node:util";
import type { CheckpointRetention, RetentionReport, RetentionRunOptions } from "./retention.js";

export const COMPACT_USAGE = "antler storage compact [--thread id] [--dry-run] [--vacuum] [--config path]";
export const COMPACT_SUMMARY =
  "Apply checkpoint retention now, store whole-list (older or full-mode) checkpoints as deltas, and drop unused messages; reports each thread's checkpoints and bytes before and after.";

/** What a storage backend hands `antler storage compact`. */
export interface CompactTarget {
  readonly retention: CheckpointRetention;
  /** Where the checkpoints are, for the header line (never credentials). */
  readonly location: string;
  /** Gives freed space back (SQLite VACUUM, PostgreSQL VACUUM ANALYZE); bytes before and after when known. */
  vacuum(): Promise<{ before?: number | undefined; after?: number | undefined }>;
  /** What to tell the user about freed space when `--vacuum` was not given. */
  readonly vacuumHint: string;
  close(): Promise<void>;
}

interface CommandIO {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/**
 * `antler storage compact`, shared by the storage plugins that contribute it. A thread is named by its checkpoint
 * thread id (`<user>/<thread>`) or by its thread id alone (every user's thread of that id).
 */
export async function runCompactCommand(args: string[], io: CommandIO, open: () => Promise<CompactTarget>): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { thread: { type: "string", multiple: true }, "dry-run": { type: "boolean" }, vacuum: { type: "boolean" } },
    strict: true,
    allowPositionals: false,
  });
  const dryRun = values["dry-run"] === true;
  const target = await open();
  try {
    const all = await target.retention.threads();
    const asked = values.thread ?? [];
    const threads = asked.length === 0 ? all : all.filter((id) => asked.some((want) => id === want || id.endsWith(`/${want}`)));
    const missing = asked.filter((want) => !all.some((id) => id === want || id.endsWith(`/${want}`)));
    if (missing.length > 0) {
      io.stderr.write(`✖ no checkpoints for thread ${missing.join(", ")} in ${target.location}\n`);
      return 1;
    }
    const policy = target.retention.policy;
    io.stdout.write(
      `${dryRun ? "Would compact" : "Compacting"} ${threads.length} thread${threads.length === 1 ? "" : "s"} in ${target.location} ` +
        `(keep: last ${policy.last}${policy.turns ? " and the last of every turn" : ""})\n`,
    );
    const step = killSwitch(io.env.ANTLER_TEST_COMPACT_KILL_AFTER);
    const reports: RetentionReport[] = [];
    for (const threadId of threads) {
      const report = await target.retention.compact(threadId, { dryRun, ...(step ? { onStep: step } : {}) });
      reports.push(report);
      io.stdout.write(`${formatReport(report)}\n`);
    }
    const total = (pick: (r: RetentionReport) => number) => reports.reduce((sum, r) => sum + pick(r), 0);
    io.stdout.write(
      `Total: ${total((r) => r.checkpointsBefore)} → ${total((r) => r.checkpointsAfter)} checkpoints, ` +
        `${formatBytes(total((r) => r.bytesBefore))} → ${formatBytes(total((r) => r.bytesAfter))}` +
        `${dryRun ? " (dry run: nothing was changed)" : ""}\n`,
    );
    if (values.vacuum && !dryRun) {
      const { before, after } = await target.vacuum();
      io.stdout.write(
        before !== undefined && after !== undefined ? `Vacuumed: ${formatBytes(before)} → ${formatBytes(after)} on disk\n` : "Vacuumed.\n",
      );
    } else if (!dryRun && total((r) => r.bytesBefore - r.bytesAfter) > 0) {
      io.stdout.write(`${target.vacuumHint}\n`);
    }
    return 0;
  } finally {
    await target.close();
  }
}

function formatReport(r: RetentionReport): string {
  const parts = [
    `${r.threadId}: ${r.checkpointsBefore} → ${r.checkpointsAfter} checkpoints`,
    `${formatBytes(r.bytesBefore)} → ${formatBytes(r.bytesAfter)}${r.dryRun ? " (estimated)" : ""}`,
  ];
  if (r.rewritten > 0)
    parts.push(`${r.rewritten} whole-list checkpoint${r.rewritten === 1 ? "" : "s"} ${r.dryRun ? "to store" : "stored"} as deltas`);
  if (r.writesDropped > 0) parts.push(`${r.writesDropped} pending write${r.writesDropped === 1 ? "" : "s"} dropped`);
  if (r.messagesDropped > 0) parts.push(`${r.messagesDropped} unused message${r.messagesDropped === 1 ? "" : "s"} dropped`);
  return `  ${parts.join(", ")}`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * Test hook for crash tests: `ANTLER_TEST_COMPACT_KILL_AFTER=<step>:<n>` kills this process with SIGKILL right
 * after the n-th `<step>` (append, rewrite, remove, prune) is durable, as a power cut or `kill -9` would.
 */
function killSwitch(spec: string | undefined): RetentionRunOptions["onStep"] {
  const match = spec ? /^(append|rewrite|remove|prune):(\d+)$/.exec(spec) : null;
  if (!match) return undefined;
  const [, at, times] = match;
  let seen = 0;
  return (step) => {
    if (step === at && ++seen >= Number(times)) process.kill(process.pid, "SIGKILL");
  };
}
