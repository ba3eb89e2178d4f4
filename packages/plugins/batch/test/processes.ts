import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(here, "../../../..");
export const ANTLER_BIN = join(REPO_ROOT, "packages/kernel/bin/antler.js");
const BATCH_DIST = join(REPO_ROOT, "packages/plugins/batch/dist");
const SUBAGENTS_DIST = join(REPO_ROOT, "packages/plugins/subagents/dist/index.js");

/** Why compiled-code tests cannot run, or undefined when dist/ is there. */
export function distMissing(): string | undefined {
  for (const file of [
    join(REPO_ROOT, "packages/kernel/dist/bundle/cli.js"),
    join(BATCH_DIST, "index.js"),
    join(BATCH_DIST, "testing/stub-plugin.js"),
    SUBAGENTS_DIST,
  ]) {
    if (!existsSync(file)) return `${file} is missing; build first (npx tsc -b packages/plugins/batch)`;
  }
  return undefined;
}

export interface WorkerConfigOptions {
  dir: string;
  postgresUrl: string;
  schema: string;
  concurrency: number;
  sleepMs: number;
  leaseSeconds?: number;
  heartbeatSeconds?: number;
  executionsFile?: string;
}

/** Writes a config.yaml for `antler worker`: PostgreSQL storage, the subagents and batch plugins, and the stub runner. */
export function writeWorkerConfig(options: WorkerConfigOptions): string {
  const file = join(options.dir, "config.yaml");
  const stub: Record<string, unknown> = { sleep_ms: options.sleepMs };
  if (options.executionsFile) stub.executions_file = options.executionsFile;
  const config = {
    base_dir: ".antler",
    logging: { level: "warn" },
    storage: { backend: "postgres", postgres_url: options.postgresUrl, postgres_schema: options.schema },
    plugins: [
      { path: SUBAGENTS_DIST, config: { runtime: { max_running: options.concurrency, max_queued: 1000 } } },
      {
        path: join(BATCH_DIST, "index.js"),
        config: {
          lease_seconds: options.leaseSeconds ?? 60,
          heartbeat_seconds: options.heartbeatSeconds ?? 5,
          worker: { concurrency: options.concurrency, claim_batch: options.concurrency, poll_ms: 50 },
        },
      },
      { path: join(BATCH_DIST, "testing/stub-plugin.js"), config: stub },
    ],
  };
  // JSON is YAML.
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<number | null>;
  output(): string;
}

/** Starts `node packages/kernel/bin/antler.js worker --config <file>`; `ready` resolves when it prints its ready line. */
export function startWorker(configFile: string, extraArgs: string[] = []): WorkerProcess {
  const child = spawn(process.execPath, [ANTLER_BIN, "worker", "--config", configFile, ...extraArgs], {
    cwd: dirname(configFile),
    env: { ...process.env, ANTLER_CONFIG: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (chunk) => {
    out += String(chunk);
  });
  child.stderr?.on("data", (chunk) => {
    out += String(chunk);
  });
  const exited = new Promise<number | null>((resolveExit) => child.once("exit", (code) => resolveExit(code)));
  const ready = new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not become ready in 30 s:\n${out}`)), 30_000);
    const check = () => {
      if (/worker \S+ ready/.test(out)) {
        clearTimeout(timer);
        resolveReady();
      }
    };
    child.stdout?.on("data", check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code} before it was ready:\n${out}`));
    });
  });
  ready.catch(() => {});
  return { child, ready, exited, output: () => out };
}
