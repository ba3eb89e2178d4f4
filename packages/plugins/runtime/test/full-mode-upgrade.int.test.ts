import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { openSqliteCheckpointer, sqliteDriver } from "@antler/plugin-storage-sqlite";
import type { BaseMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import type { AntlerClient } from "../src/client/client.js";
import { weatherClient, weatherThenAnswer } from "./fixtures/weather.js";
import { tempDir } from "./fixtures.js";

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, "fixtures", "full-mode-v0");
const REPO_ROOT = resolve(here, "../../../..");
const ANTLER_BIN = join(REPO_ROOT, "packages/kernel/bin/antler.js");
const THREAD = "default/fixture-thread";

const missingDist = [
  join(REPO_ROOT, "packages/kernel/dist/bundle/cli.js"),
  join(REPO_ROOT, "packages/plugins/storage-sqlite/dist/compact.js"),
  join(REPO_ROOT, "packages/storage-kit/dist/compact-command.js"),
].find((file) => !existsSync(file));
const cliReason = missingDist && `${missingDist} is missing; build first (pnpm --filter @antler/plugin-storage-sqlite... run build)`;

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

/** A fresh copy of the fixture as a project: `<dir>/config.yaml` and `<dir>/.antler/data/*.sqlite`. */
function project(): { dir: string; file: string } {
  const dir = tempDir();
  const data = join(dir, ".antler", "data");
  mkdirSync(data, { recursive: true });
  for (const name of ["antler.sqlite", "checkpoints.sqlite"]) copyFileSync(join(FIXTURE, name), join(data, name));
  writeFileSync(join(dir, "config.yaml"), "logging:\n  level: warn\n");
  return { dir, file: join(data, "checkpoints.sqlite") };
}

/** A message as the thread shows it: everything that must survive a rewrite. */
function describeMessage(m: BaseMessage): string {
  const fields = m as BaseMessage & { tool_calls?: unknown; tool_call_id?: unknown };
  return JSON.stringify([m.getType(), m.id, m.content, fields.tool_calls ?? null, fields.tool_call_id ?? null, m.name ?? null]);
}

/** Every checkpoint of the thread, by id: its parent and its values with the messages described. */
async function snapshot(file: string): Promise<Map<string, string>> {
  const checkpointer = await openSqliteCheckpointer(file);
  try {
    const out = new Map<string, string>();
    for await (const tuple of checkpointer.saver.list({ configurable: { thread_id: THREAD, checkpoint_ns: "" } })) {
      const { messages, ...rest } = tuple.checkpoint.channel_values as { messages?: BaseMessage[] };
      out.set(
        tuple.checkpoint.id,
        JSON.stringify({
          parent: tuple.parentConfig?.configurable?.checkpoint_id ?? null,
          messages: (messages ?? []).map(describeMessage),
          rest,
        }),
      );
    }
    return out;
  } finally {
    await checkpointer.close();
  }
}

function rows(file: string, sql: string): number {
  const db = new (sqliteDriver())(file, { readonly: true });
  try {
    return db.prepare(sql).pluck().get() as number;
  } finally {
    db.close();
  }
}

/** `antler storage compact <args>` in its own process; resolves with how it ended and what it printed. */
function compact(dir: string, args: string[] = [], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string }>((done, fail) => {
    const child = spawn(process.execPath, [ANTLER_BIN, "storage", "compact", "--config", join(dir, "config.yaml"), ...args], {
      cwd: dir,
      env: { ...process.env, ANTLER_CONFIG: "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => (out += String(chunk)));
    child.stderr.on("data", (chunk) => (err += String(chunk)));
    child.on("error", fail);
    child.on("exit", (code, signal) => done({ code, signal, out, err }));
  });
}

const script = weatherThenAnswer(() => "Nice");

async function openClient(dir: string) {
  const c = await weatherClient({ storage: { backend: "sqlite" }, cwd: dir, script });
  clients.push(c);
  return c;
}

describe("a thread written before delta checkpoints (full mode, Antler afd9bb2)", () => {
  it("opens: this version reads its state as the old one wrote it", async () => {
    const { dir } = project();
    const c = await openClient(dir);
    const thread = await c.getThread("fixture-thread");
    expect(thread.messages).toHaveLength(28);
    expect(thread.messages[0]).toMatchObject({ type: "human", content: "Tell me about Oslo." });
    expect(thread.messages.filter((m) => m.type === "tool")).toHaveLength(6);
    expect(thread.messages.at(-1)).toMatchObject({ type: "ai", content: "It is Bern: 21°C, clear." });
  });

  it("runs new turns on top of it, storing only their messages in the log", async () => {
    const { dir, file } = project();
    const c = await openClient(dir);
    const old = (await c.getThread("fixture-thread")).messages;
    await c.chat("And Nice?", { threadId: "fixture-thread" });
    await c.chat("Nice again?", { threadId: "fixture-thread" });
    await c.idle();
    const thread = await c.getThread("fixture-thread");
    expect(thread.messages).toHaveLength(36);
    expect(thread.messages.slice(0, 28)).toEqual(old);
    expect(thread.messages.at(-1)).toMatchObject({ type: "ai", content: "It is Nice: 21°C, clear." });
    // The old list is stored once more (the first delta write of a whole-list thread), then only new messages.
    expect(rows(file, "SELECT count(*) FROM antler_messages")).toBe(28 + 4 + 4);
  });

  it.skipIf(cliReason)("`antler storage compact` converts it: same state, same kept history, a smaller file", async () => {
    const { dir, file } = project();
    const before = await snapshot(file);
    const sizeBefore = statSync(file).size;
    const dry = await compact(dir, ["--dry-run"]);
    expect(dry.code, dry.err).toBe(0);
    expect(dry.out).toMatch(/default\/fixture-thread: 36 → 23 checkpoints/);
    expect(await snapshot(file)).toEqual(before);

    const run = await compact(dir, ["--vacuum"]);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(
      /default\/fixture-thread: 36 → 23 checkpoints, [\d.]+ KiB → [\d.]+ KiB, 36 whole-list checkpoints stored as deltas/,
    );
    expect(run.out).toMatch(/Vacuumed: /);
    const after = await snapshot(file);
    expect(after.size).toBe(23);
    for (const [id, values] of after) expect(values, id).toBe(before.get(id));
    // The newest checkpoint, and the end of every turn, are among those kept.
    const newest = [...before.keys()].sort().at(-1) as string;
    expect(after.has(newest)).toBe(true);
    expect(rows(file, "SELECT count(*) FROM antler_messages")).toBe(28);
    expect(
      rows(file, "SELECT count(*) FROM checkpoints WHERE json_type(CAST(checkpoint AS TEXT), '$.channel_values.messages') = 'array'"),
    ).toBe(0);
    expect(statSync(file).size).toBeLessThan(sizeBefore / 2);

    // It runs on after compaction, and a second compaction finds nothing to do.
    const c = await openClient(dir);
    await c.chat("And Nice?", { threadId: "fixture-thread" });
    expect((await c.getThread("fixture-thread")).messages).toHaveLength(32);
    await c.close();
    const again = await compact(dir);
    expect(again.code, again.err).toBe(0);
    expect(again.out).not.toMatch(/stored as deltas/);
  });
});

describe.skipIf(cliReason)("killed during `antler storage compact`", () => {
  it.each(["append:3", "rewrite:10", "rewrite:36", "remove:1", "prune:1"])(
    "after %s the thread reads back consistent, and compact runs again to the same result",
    async (killAt) => {
      const { dir, file } = project();
      const before = await snapshot(file);
      const killed = await compact(dir, [], { ANTLER_TEST_COMPACT_KILL_AFTER: killAt });
      expect(killed.signal, killed.out + killed.err).toBe("SIGKILL");
      const midway = await snapshot(file);
      for (const [id, values] of midway) expect(values, id).toBe(before.get(id));
      const newest = [...before.keys()].sort().at(-1) as string;
      expect(midway.get(newest)).toBe(before.get(newest));

      const rerun = await compact(dir);
      expect(rerun.code, rerun.err).toBe(0);
      const after = await snapshot(file);
      expect(after.size).toBe(23);
      for (const [id, values] of after) expect(values, id).toBe(before.get(id));
      // Rows an interrupted run stored are reused, not stored twice.
      expect(rows(file, "SELECT count(*) FROM antler_messages")).toBe(28);
    },
  );
});
