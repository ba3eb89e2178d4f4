import { createWriteStream } from "node:fs";
import { parseArgs } from "node:util";
import { type CliCommand, type CliIO, DEFAULT_USER_ID } from "@antler/kernel";
import { BATCH_SERVICE, type BatchService } from "./service.js";
import type { BatchStatus } from "./store.js";

const write = (stream: NodeJS.WritableStream, text: string) => stream.write(text.endsWith("\n") ? text : `${text}\n`);

function service(io: CliIO): BatchService {
  return io.kernel.scope.resolve(BATCH_SERVICE);
}

type Flags = Record<string, string | boolean | undefined>;
type FlagSpec = Record<string, { type: "string" | "boolean"; short?: string }>;

function parse(args: string[], options: FlagSpec): { values: Flags; positionals: string[] } {
  const parsed = parseArgs({ args, options: { user: { type: "string", short: "u" }, ...options }, allowPositionals: true, strict: true });
  return { values: parsed.values as Flags, positionals: parsed.positionals };
}

const BAR_WIDTH = 30;

/** One progress line: a bar when drawn on a terminal, plain text otherwise. */
export function renderProgress(status: BatchStatus, options: { tty: boolean; elapsedMs?: number; sinceDone?: number }): string {
  const c = status.counts;
  const fraction = status.totalItems === 0 ? 1 : status.done / status.totalItems;
  const percent = `${Math.floor(fraction * 100)}%`.padStart(4);
  const progressed = status.done - (options.sinceDone ?? 0);
  const rate =
    options.elapsedMs !== undefined && options.elapsedMs >= 1000 && progressed > 0
      ? `  ${((progressed / options.elapsedMs) * 1000).toFixed(1)} items/s`
      : "";
  const tally = `${status.done}/${status.totalItems} done · running ${c.running} · pending ${c.pending} · failed ${c.failed} · timed_out ${c.timed_out} · cancelled ${c.cancelled}`;
  if (!options.tty) return `${status.id} ${status.state} ${percent.trim()} ${tally}${rate}`;
  const filled = Math.round(fraction * BAR_WIDTH);
  return `[${"█".repeat(filled)}${"░".repeat(BAR_WIDTH - filled)}] ${percent} ${tally}${rate}`;
}

function formatStatus(status: BatchStatus): string {
  const v = status.verdicts;
  return [
    `${status.id}  "${status.title}"  (${status.subagentType})`,
    `state: ${status.state}   created: ${status.createdAt}${status.finishedAt ? `   finished: ${status.finishedAt}` : ""}   trace: ${status.traceId}`,
    renderProgress(status, { tty: false }).replace(`${status.id} `, ""),
    `acceptance: MET ${v.MET} · UNMET ${v.UNMET} · UNVERIFIED ${v.UNVERIFIED} · no verdict ${v.none}`,
  ].join("\n");
}

async function watch(io: CliIO, batchId: string, user: string, intervalMs: number): Promise<number> {
  const client = await service(io).client(user);
  const tty = (io.stdout as NodeJS.WriteStream).isTTY === true;
  const started = Date.now();
  let lastLine = "";
  let last: BatchStatus | undefined;
  let firstDone: number | undefined;
  for await (const status of client.watch(batchId, { intervalMs })) {
    last = status;
    firstDone ??= status.done;
    // The rate counts only what finished while watching.
    const line = renderProgress(status, { tty, elapsedMs: Date.now() - started, sinceDone: firstDone });
    if (tty) io.stdout.write(`\r\x1b[2K${line}`);
    else if (line.replace(/ {2}[\d.]+ items\/s$/, "") !== lastLine.replace(/ {2}[\d.]+ items\/s$/, "")) write(io.stdout, line);
    lastLine = line;
  }
  if (tty) io.stdout.write("\n");
  if (last) write(io.stdout, `batch ${last.id} ${last.state}`);
  return 0;
}

export function batchCommands(): CliCommand[] {
  return [
    {
      name: "batch status",
      summary: "Show a batch's counts by execution state and its acceptance verdicts; --watch draws live progress until it ends.",
      usage: "antler batch status <batch-id> [--watch] [--interval ms] [--json] [--user id] [--config path]",
      async run(args, io) {
        const { values, positionals } = parse(args, {
          watch: { type: "boolean", short: "w" },
          interval: { type: "string" },
          json: { type: "boolean" },
        });
        const batchId = positionals[0];
        if (!batchId) {
          write(io.stderr, "antler batch status: give a batch id, e.g. antler batch status batch_0123…");
          return 2;
        }
        const user = (values.user as string | undefined) ?? DEFAULT_USER_ID;
        if (values.watch) return watch(io, batchId, user, Number(values.interval ?? 1000) || 1000);
        const status = await (await service(io).client(user)).status(batchId);
        write(io.stdout, values.json ? JSON.stringify(status, null, 2) : formatStatus(status));
        return 0;
      },
    },
    {
      name: "batch export",
      summary: "Write a batch's items with their results as JSON Lines (stdout, or --out file).",
      usage: "antler batch export <batch-id> [--out file.jsonl] [--user id] [--config path]",
      async run(args, io) {
        const { values, positionals } = parse(args, { out: { type: "string", short: "o" } });
        const batchId = positionals[0];
        if (!batchId) {
          write(io.stderr, "antler batch export: give a batch id");
          return 2;
        }
        const client = await service(io).client((values.user as string | undefined) ?? DEFAULT_USER_ID);
        // Checks the id (and the owner) before a file is created.
        await client.status(batchId);
        if (typeof values.out !== "string") {
          await client.exportJsonl(batchId, io.stdout);
          return 0;
        }
        const file = createWriteStream(values.out);
        const lines = await client.exportJsonl(batchId, file);
        await new Promise<void>((resolve, reject) => {
          file.once("error", reject);
          file.end(() => resolve());
        });
        write(io.stderr, `wrote ${lines} item(s) to ${values.out}`);
        return 0;
      },
    },
    {
      name: "batch cancel",
      summary: "Cancel a batch's pending and running items.",
      usage: "antler batch cancel <batch-id> [--user id] [--config path]",
      async run(args, io) {
        const { values, positionals } = parse(args, {});
        const batchId = positionals[0];
        if (!batchId) {
          write(io.stderr, "antler batch cancel: give a batch id");
          return 2;
        }
        const client = await service(io).client((values.user as string | undefined) ?? DEFAULT_USER_ID);
        const { cancelledItems } = await client.cancel(batchId);
        write(io.stdout, `batch ${batchId} cancelled: ${cancelledItems} pending or running item(s) stopped`);
        return 0;
      },
    },
    {
      name: "batch list",
      summary: "List your batches, newest first.",
      usage: "antler batch list [--limit n] [--user id] [--config path]",
      async run(args, io) {
        const { values } = parse(args, { limit: { type: "string" } });
        const client = await service(io).client((values.user as string | undefined) ?? DEFAULT_USER_ID);
        const batches = await client.list({ limit: Number(values.limit ?? 50) || 50 });
        if (batches.length === 0) write(io.stdout, "no batches");
        for (const b of batches)
          write(io.stdout, `${b.id}  ${b.state.padEnd(9)} ${String(b.totalItems).padStart(6)} items  ${b.createdAt}  ${b.title}`);
        return 0;
      },
    },
    {
      name: "worker",
      summary:
        "Run batch items from the configured database until SIGINT/SIGTERM (or, with --drain, until no work is left), and execute queued runs and take over the runs of stopped instances (unless --no-runs).",
      usage: "antler worker [--concurrency n] [--drain] [--worker-id id] [--no-runs] [--config path]",
      async run(args, io) {
        const { values } = parse(args, {
          concurrency: { type: "string" },
          drain: { type: "boolean" },
          "worker-id": { type: "string" },
          grace: { type: "string" },
          "no-runs": { type: "boolean" },
        });
        const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
        if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1)) {
          write(io.stderr, `antler worker: --concurrency must be a positive integer (got ${String(values.concurrency)})`);
          return 2;
        }
        const svc = service(io);
        // This process runs only this worker, so the kernel is started to bring up the other plugins' services.
        if (io.kernel.status === "booted") await io.kernel.start();
        const store = await svc.store();
        const worker = await svc.createWorker({
          ...(concurrency ? { concurrency } : {}),
          ...(typeof values["worker-id"] === "string" ? { workerId: values["worker-id"] } : {}),
        });
        const graceMs = Number(values.grace ?? 30_000);
        let stopping: Promise<void> | undefined;
        const { AntlerClient, RUN_HOSTING_TOKEN, untilShutdown } = await import("@antler/plugin-runtime");
        // The runs of a stopped gateway (or worker) are continued here too, unless this worker is for batches only,
        // with the gateway's run options and run event log when the gateway plugin is configured.
        const hosting = io.kernel.scope.tryResolve(RUN_HOSTING_TOKEN);
        const runs =
          values["no-runs"] || values.drain ? undefined : new AntlerClient({ kernel: io.kernel, ...(hosting?.clientOptions ?? {}) });
        const detachRuns = runs && hosting ? await hosting.attach(runs) : undefined;
        // It executes queued runs (those of `runs.execute: false` gateways) and, through the same heartbeat, takes over
        // the runs of stopped instances.
        const releaseRuns = runs ? await runs.executeQueued() : undefined;
        const shutdown = untilShutdown();
        void shutdown.reason.then((reason) => {
          write(io.stderr, `worker ${worker.workerId}: ${reason}, finishing items in flight (grace ${graceMs} ms)`);
          stopping ??= worker.stop(graceMs);
        });
        try {
          write(io.stdout, `worker ${worker.workerId} ready: ${store.database.dialect} ${store.database.location}`);
          if (values.drain) {
            await worker.drain();
          } else {
            worker.start();
            await new Promise<void>((resolve) => {
              const check = setInterval(() => {
                if (stopping) {
                  clearInterval(check);
                  resolve();
                }
              }, 50);
            });
          }
          await stopping;
          const c = worker.counters;
          write(io.stdout, `worker ${worker.workerId} stopped: ${c.recorded} recorded, ${c.discarded} discarded, ${c.released} released`);
          return 0;
        } finally {
          shutdown.dispose();
          await releaseRuns?.();
          await runs?.cancelAll("worker stopping");
          await detachRuns?.();
          await runs?.close();
        }
      },
    },
  ];
}
