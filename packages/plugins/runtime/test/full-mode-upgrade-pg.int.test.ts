import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { openPostgresCheckpointer } from "@antler/plugin-storage-postgres";
import type { BaseMessage } from "@langchain/core/messages";
import { afterEach, expect, it } from "vitest";
import type { AntlerClient } from "../src/client/client.js";
import { schemaQuery, weatherClient, weatherThenAnswer } from "./fixtures/weather.js";
import { tempDir } from "./fixtures.js";

const here = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = resolve(here, "../../../..");
const ANTLER_BIN = join(REPO_ROOT, "packages/kernel/bin/antler.js");
const THREAD = "default/old-thread";

const missingDist = [
  join(REPO_ROOT, "packages/kernel/dist/bundle/cli.js"),
  join(REPO_ROOT, "packages/plugins/storage-postgres/dist/compact.js"),
  join(REPO_ROOT, "packages/storage-kit/dist/compact-command.js"),
].find((file) => !existsSync(file));
const cliReason = missingDist && `${missingDist} is missing; build first (pnpm --filter @antler/plugin-storage-postgres... run build)`;

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

const script = weatherThenAnswer((messages) => String(messages.at(-1)?.content).split(" ").at(-1));

/** A message as the thread shows it: everything that must survive a rewrite. */
function describeMessage(m: BaseMessage): string {
  const fields = m as BaseMessage & { tool_calls?: unknown; tool_call_id?: unknown };
  return JSON.stringify([m.getType(), m.id, m.content, fields.tool_calls ?? null, fields.tool_call_id ?? null, m.name ?? null]);
}

describeWithPostgres("a PostgreSQL thread written in full mode (LangGraph's format, what the previous version wrote)", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_pg_upgrade" });

  const query = schemaQuery(url, () => schema.name);
  // Messages blobs that hold the whole list rather than a reference into antler_messages.
  const wholeLists = () =>
    query(`SELECT count(*) FROM $schema.checkpoint_blobs
      WHERE channel = 'messages' AND type = 'json' AND jsonb_typeof(convert_from(blob, 'UTF8')::jsonb) = 'array'`);
  // Checkpoints whose messages blob holds the whole list.
  const wholeListCheckpoints = () =>
    query(`SELECT count(*) FROM $schema.checkpoints c JOIN $schema.checkpoint_blobs b
      ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = 'messages'
        AND b.version = c.checkpoint->'channel_versions'->>'messages'
      WHERE b.type = 'json' AND jsonb_typeof(convert_from(b.blob, 'UTF8')::jsonb) = 'array'`);
  // The bytes the thread's checkpoint data and message rows hold.
  const dataBytes = () =>
    query(`SELECT (SELECT coalesce(sum(octet_length(blob)), 0) FROM $schema.checkpoint_blobs)
      + (SELECT coalesce(sum(octet_length(checkpoint::text) + octet_length(metadata::text)), 0) FROM $schema.checkpoints)
      + (SELECT coalesce(sum(octet_length(blob)), 0) FROM $schema.checkpoint_writes)
      + (SELECT coalesce(sum(octet_length(data)), 0) FROM $schema.antler_messages)`);

  async function client(mode: "delta" | "full") {
    const c = await weatherClient({
      // No retention while writing, as before it existed: compaction prunes.
      storage: { backend: "postgres", postgres_url: url, postgres_schema: schema.name, checkpoint: { mode, keep: { last: 100_000 } } },
      cwd: tempDir(),
      script,
    });
    clients.push(c);
    return c;
  }

  /** The old thread: `turns` turns of a question, a tool call, its result and an answer, in full mode. */
  async function writeOldThread(turns: number): Promise<BaseMessage[]> {
    const c = await client("full");
    const cities = ["Oslo", "Bern", "Lima", "Rome", "Kyiv", "Riga", "Doha", "Baku"];
    for (let turn = 0; turn < turns; turn++) await c.chat(`Weather in ${cities[turn % cities.length]}`, { threadId: "old-thread" });
    await c.idle();
    const messages = (await c.getThread("old-thread")).messages as unknown as BaseMessage[];
    await c.close();
    clients.splice(clients.indexOf(c), 1);
    return messages;
  }

  /** Every checkpoint of the thread by id, read through the delta saver: its parent and values, messages described. */
  async function snapshot(): Promise<Map<string, string>> {
    const checkpointer = await openPostgresCheckpointer(url, { schema: schema.name });
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

  /** `antler storage compact <args>` in its own process, on this schema with `storage.checkpoint.keep: { last, turns: true }`. */
  function compact(args: string[] = [], env: Record<string, string> = {}, last = 5) {
    const dir = tempDir();
    writeFileSync(
      join(dir, "config.yaml"),
      [
        "logging:",
        "  level: warn",
        "storage:",
        "  backend: postgres",
        `  postgres_url: ${JSON.stringify(url)}`,
        `  postgres_schema: ${schema.name}`,
        "  checkpoint:",
        `    keep: { last: ${last}, turns: true }`,
        "",
      ].join("\n"),
    );
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

  it("opens in delta mode and runs new turns on top of it, storing the old list once and then only new messages", async () => {
    const old = await writeOldThread(4);
    expect(old).toHaveLength(16);
    expect(await query("SELECT count(*) FROM $schema.antler_messages")).toBe(0);
    expect(await wholeLists()).toBeGreaterThan(0);

    const c = await client("delta");
    expect((await c.getThread("old-thread")).messages).toEqual(old);
    await c.chat("Weather in Nice", { threadId: "old-thread" });
    await c.chat("Weather in Nice", { threadId: "old-thread" });
    await c.idle();
    const thread = await c.getThread("old-thread");
    expect(thread.messages).toHaveLength(24);
    expect(thread.messages.slice(0, 16)).toEqual(old);
    expect(thread.messages.at(-1)).toMatchObject({ type: "ai", content: "It is Nice: 21°C, clear." });
    expect(await query("SELECT count(*) FROM $schema.antler_messages")).toBe(16 + 4 + 4);
  });

  it.skipIf(cliReason)(
    "`antler storage compact` converts it: same state and history by checkpoint id, fewer bytes, idempotent",
    async () => {
      await writeOldThread(6);
      const delta = await client("delta");
      await delta.chat("Weather in Nice", { threadId: "old-thread" });
      await delta.idle();
      await delta.close();
      clients.length = 0;
      const before = await snapshot();
      const bytesBefore = await dataBytes();
      const wholeBefore = await wholeListCheckpoints();
      // Steps that add no message share the list's blob, so there are fewer blobs than checkpoints to convert.
      expect(await wholeLists()).toBeLessThan(wholeBefore);
      expect(wholeBefore).toBeGreaterThan(20);

      // A policy that keeps every checkpoint, so what changes is the rewrite alone.
      const keepAll = 100_000;
      const dry = await compact(["--dry-run"], {}, keepAll);
      expect(dry.code, dry.err).toBe(0);
      expect(dry.out).toMatch(
        new RegExp(`${THREAD}: ${before.size} → ${before.size} checkpoints.*, ${wholeBefore} whole-list checkpoints to store as deltas`),
      );
      expect(await snapshot()).toEqual(before);
      expect(await dataBytes()).toBe(bytesBefore);

      const run = await compact(["--vacuum"], {}, keepAll);
      expect(run.code, run.err).toBe(0);
      expect(run.out).toMatch(
        new RegExp(
          `${THREAD}: ${before.size} → ${before.size} checkpoints, [\\d.]+ KiB → [\\d.]+ KiB, ${wholeBefore} whole-list checkpoints stored as deltas`,
        ),
      );
      expect(run.out).toContain("Vacuumed.");
      expect(await snapshot()).toEqual(before);
      expect(await wholeLists()).toBe(0);
      // Each message stored once: the 24 old ones (already in the log from the delta turn's first write) and its 4.
      expect(await query("SELECT count(*) FROM $schema.antler_messages")).toBe(28);
      const bytesAfter = await dataBytes();
      expect(bytesAfter).toBeLessThan(bytesBefore / 2);

      // It runs on after compaction, and a second compaction has nothing to rewrite.
      const c = await client("delta");
      await c.chat("Weather in Rome", { threadId: "old-thread" });
      expect((await c.getThread("old-thread")).messages).toHaveLength(32);
      await c.close();
      clients.length = 0;
      const again = await compact([], {}, keepAll);
      expect(again.code, again.err).toBe(0);
      expect(again.out).toMatch(new RegExp(`${THREAD}: `));
      expect(again.out).not.toMatch(/stored as deltas/);
    },
  );

  it.skipIf(cliReason).each(["append:2", "rewrite:3", "remove:1", "prune:1"])(
    "killed after %s, the thread reads back consistent and compact runs again to the same result",
    async (killAt) => {
      await writeOldThread(6);
      const before = await snapshot();
      const killed = await compact([], { ANTLER_TEST_COMPACT_KILL_AFTER: killAt });
      expect(killed.signal, killed.out + killed.err).toBe("SIGKILL");
      const midway = await snapshot();
      for (const [id, values] of midway) expect(values, id).toBe(before.get(id));
      const newest = [...before.keys()].sort().at(-1) as string;
      expect(midway.get(newest)).toBe(before.get(newest));

      const rerun = await compact();
      expect(rerun.code, rerun.err).toBe(0);
      const after = await snapshot();
      expect(after.size).toBeLessThan(before.size);
      for (const [id, values] of after) expect(values, id).toBe(before.get(id));
      expect(await wholeLists()).toBe(0);
      // Rows an interrupted run stored are reused, not stored twice.
      expect(await query("SELECT count(*) FROM $schema.antler_messages")).toBe(24);

      const c = await client("delta");
      await c.chat("Weather in Nice", { threadId: "old-thread" });
      expect((await c.getThread("old-thread")).messages).toHaveLength(28);
      await c.idle();
    },
  );
});
