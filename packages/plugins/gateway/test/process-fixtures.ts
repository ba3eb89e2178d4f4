import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AntlerServe,
  antlerBinPath,
  antlerCliBuilt,
  type OpenAICompatibleServer,
  startAntlerServe,
  startOpenAICompatibleServer,
} from "@antler/kernel/testing";
import { afterEach } from "vitest";
import type { SseFrame } from "./fixtures.js";

// Fixtures of the tests at the process boundary (`antler serve` and `antler worker` processes on one database): the
// crash matrix of durable runs and the queued-runs tests. Each test's processes are killed after it.

const here = fileURLToPath(new URL(".", import.meta.url));
export const dists = {
  gateway: resolve(here, "../dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
  metrics: resolve(here, "../../metrics/dist/index.js"),
  subagents: resolve(here, "../../subagents/dist/index.js"),
  batch: resolve(here, "../../batch/dist/index.js"),
  guardrails: resolve(here, "../../guardrails/dist/index.js"),
};
export const built = Object.values(dists).every((p) => existsSync(p)) && antlerCliBuilt();
export const KEY = "alice-key-0123456789abcdef";

export const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

export type Case = "model" | "idempotent-tool" | "plain-tool" | "two-tools";

export interface Tally {
  lostRuns: number;
  duplicatedPlainToolRuns: number;
  streamGaps: number;
}

/**
 * A tool plugin: `lookup` (idempotent) and `charge` (not); each notes every start in the ledger, then waits while
 * `stall` exists (`lookup` not at all when `stall` is `charge`'s only: `stall-charge`).
 */
export function writeToolPlugin(dir: string, onlyCharge = false): { ledger: string; stall: string } {
  const ledger = join(dir, "ledger.txt");
  const stall = join(dir, onlyCharge ? "stall-charge" : "stall");
  const tool = (name: string, idempotent: boolean) =>
    [
      "    ctx.tools.add(defineTool({",
      `      name: ${JSON.stringify(name)}, description: "Does ${name}.", schema: z.object({ item: z.string() }),`,
      "      run: async ({ item }) => {",
      `        appendFileSync(${JSON.stringify(ledger)}, ${JSON.stringify(name)} + " " + item + " " + process.pid + "\\n");`,
      `        while (existsSync(${JSON.stringify(name === "charge" || !onlyCharge ? stall : join(dir, "never"))})) await new Promise((r) => setTimeout(r, 20));`,
      `        return ${JSON.stringify(`${name} result for `)} + item;`,
      "      },",
      `    }), { group: "test", idempotent: ${idempotent} });`,
    ].join("\n");
  writeFileSync(
    join(dir, "tools.mjs"),
    [
      'import { appendFileSync, existsSync } from "node:fs";',
      "export default ({ definePlugin, defineTool, z }) => definePlugin({",
      '  name: "crash-tools", version: "1.0.0", kernel: "^0.1.0",',
      "  setup(ctx) {",
      tool("lookup", true),
      tool("charge", false),
      "  },",
      "});",
      "",
    ].join("\n"),
  );
  return { ledger, stall };
}

export function writeConfig(
  dir: string,
  modelUrl: string,
  storage: string[],
  withWorker: boolean,
  approval = false,
  runs: { execute?: boolean; lease_seconds?: number; on_shutdown?: "hand_over" | "cancel" } = {},
): void {
  writeFileSync(
    join(dir, "config.yaml"),
    [
      ...(approval ? ["approval:", "  rules:", '    - { name: money, tools: [charge], reason: "It charges a card" }'] : []),
      ...storage,
      "title:",
      "  enabled: false",
      "models:",
      "  - name: loopback",
      "    provider: openai",
      "    model: scripted-model",
      `    base_url: ${modelUrl}`,
      "    api_key: test-key",
      "    max_retries: 0",
      "plugins:",
      `  - path: ${JSON.stringify(dists.openai)}`,
      "  - path: ./tools.mjs",
      `  - path: ${JSON.stringify(dists.gateway)}`,
      "    config:",
      "      auth:",
      "        api_keys:",
      "          - { key: $ALICE_KEY, user: alice }",
      "      runs:",
      "        heartbeat_seconds: 0.5",
      `        lease_seconds: ${runs.lease_seconds ?? 3}`,
      ...(runs.execute === false ? ["        execute: false"] : []),
      ...(runs.on_shutdown ? [`        on_shutdown: ${runs.on_shutdown}`] : []),
      `  - path: ${JSON.stringify(dists.metrics)}`,
      ...(approval ? [`  - path: ${JSON.stringify(dists.guardrails)}`] : []),
      // `antler worker` comes with the batch plugin (which needs the subagents plugin).
      ...(withWorker ? [`  - path: ${JSON.stringify(dists.subagents)}`, `  - path: ${JSON.stringify(dists.batch)}`] : []),
      "",
    ].join("\n"),
  );
}

/** The loopback model: its first call stalls (case `model`) or asks for the case's tool; later calls answer with what they saw. */
export function scriptedModel(kind: Case): Promise<OpenAICompatibleServer> {
  const tool = kind === "idempotent-tool" ? "lookup" : "charge";
  return startOpenAICompatibleServer({
    handler: async (body, index) => {
      const last = body.messages.at(-1) as { role: string; content?: unknown };
      if (kind === "model") {
        // The first call is A's: it never answers (A is killed while waiting); B's call gets the answer.
        if (index === 0) await new Promise(() => {});
        return { text: "the answer after a takeover" };
      }
      if (last.role === "tool") return { text: `final: ${String(last.content)}` };
      if (kind === "two-tools") {
        return {
          toolCalls: [
            { name: "lookup", args: { item: "order-7" }, id: "call_1" },
            { name: "charge", args: { item: "order-7" }, id: "call_2" },
          ],
        };
      }
      return { toolCalls: [{ name: tool, args: { item: "order-7" }, id: "call_1" }] };
    },
  });
}

export async function serve(dir: string): Promise<AntlerServe> {
  const started = await startAntlerServe({
    cwd: dir,
    env: { ALICE_KEY: KEY, ANTLER_LOG_LEVEL: process.env.TAKEOVER_DEBUG ? "debug" : "warn" },
  });
  cleanups.push(async () => {
    if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill("SIGKILL");
  });
  return started;
}

export const call = (url: string, path: string, init: RequestInit & { json?: unknown } = {}) => {
  const { json, headers, ...rest } = init;
  return fetch(`${url}${path}`, {
    ...rest,
    ...(json === undefined ? {} : { method: rest.method ?? "POST", body: JSON.stringify(json) }),
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...(headers as Record<string, string>) },
  });
};

export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Ids must run 1, 2, 3, ... (from `after + 1`) without a hole or a repeat. */
export function gapsIn(frames: readonly SseFrame[], after = 0): number {
  let gaps = 0;
  let expected = after + 1;
  for (const frame of frames) {
    const id = Number(frame.id);
    if (id !== expected) gaps += 1;
    expected = id + 1;
  }
  return gaps;
}

/** `antler worker` in `dir` (batch items and, by default, the runs of stopped instances); resolves once it is ready. */
export async function startWorker(dir: string): Promise<{ output: () => string; child: ChildProcess }> {
  const child = spawn(process.execPath, [antlerBinPath(), "worker", "--config", "config.yaml"], {
    cwd: dir,
    env: { ...process.env, ANTLER_CONFIG: "", ALICE_KEY: KEY, ANTLER_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let out = "";
  child.stdout.on("data", (chunk) => {
    out += String(chunk);
  });
  child.stderr.on("data", (chunk) => {
    out += String(chunk);
  });
  await until("antler worker to be ready", () => /worker \S+ ready/.test(out), 60_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${out}`);
  });
  return { output: () => out, child };
}
