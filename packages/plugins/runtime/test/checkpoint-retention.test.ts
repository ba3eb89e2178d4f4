import { join } from "node:path";
import { definePlugin } from "@antler/kernel";
import { captureLogs, scriptedModelsPlugin } from "@antler/kernel/testing";
import sqlitePlugin, { openSqliteCheckpointer, sqliteDriver } from "@antler/plugin-storage-sqlite";
import type { BaseMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { AntlerClient } from "../src/client/client.js";
import { BackgroundPruner } from "../src/stores/retention.js";
import { weatherThenAnswer, weatherToolsPlugin } from "./fixtures/weather.js";
import { tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

// Every turn calls the tool once, then answers: input, model, tools, model = several checkpoints per turn.
const toolThenAnswer = weatherThenAnswer();

async function client(cwd: string, keep: { last?: number; turns?: boolean }, extra: Record<string, unknown> = {}) {
  const c = await AntlerClient.create({
    config: {
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "sqlite", checkpoint: { keep } },
      title: { enabled: false },
      ...extra,
    },
    plugins: [scriptedModelsPlugin({ m: toolThenAnswer }), weatherToolsPlugin],
    cwd,
    env: {},
    discover: false,
  });
  clients.push(c);
  return c;
}

const checkpointsFile = (cwd: string) => join(cwd, ".antler", "data", "checkpoints.sqlite");

function count(file: string, sql: string): number {
  const db = new (sqliteDriver())(file, { readonly: true });
  try {
    return (db.prepare(sql).pluck().get() as number) ?? 0;
  } finally {
    db.close();
  }
}

/** Every stored checkpoint of the thread with its messages (type and text), newest first. */
async function history(file: string, thread: string) {
  const checkpointer = await openSqliteCheckpointer(file);
  try {
    const out: Array<{ id: string; messages: string[] }> = [];
    for await (const tuple of checkpointer.saver.list({ configurable: { thread_id: `default/${thread}`, checkpoint_ns: "" } })) {
      const messages = (tuple.checkpoint.channel_values.messages as BaseMessage[] | undefined) ?? [];
      out.push({ id: tuple.checkpoint.id, messages: messages.map((m) => `${m.getType()}: ${String(m.content)}`) });
    }
    return out;
  } finally {
    await checkpointer.close();
  }
}

describe("checkpoint retention after runs", () => {
  it("keeps the newest `last` checkpoints and the last of every turn, so every turn can still be travelled to", async () => {
    const cwd = tempDir();
    const c = await client(cwd, { last: 3, turns: true });
    const afterTurn: string[][] = [];
    for (let turn = 0; turn < 5; turn++) {
      await c.chat(`question ${turn}`, { threadId: "t" });
      await c.idle();
      afterTurn.push((await c.getThread("t")).messages.map((m) => `${m.type}: ${m.content}`));
    }
    const kept = await history(checkpointsFile(cwd), "t");
    // The last 3, plus the ends of turns 0–3 (turn 4's end is the newest).
    expect(kept).toHaveLength(7);
    for (const [turn, state] of afterTurn.entries()) {
      expect(
        kept.some((checkpoint) => JSON.stringify(checkpoint.messages) === JSON.stringify(state)),
        `turn ${turn}`,
      ).toBe(true);
    }
    expect(kept[0]?.messages).toEqual(afterTurn.at(-1));
    // Pending writes of finished steps are gone with them.
    expect(count(checkpointsFile(cwd), "SELECT count(*) FROM writes")).toBe(0);
    // Each message is still stored once.
    expect(count(checkpointsFile(cwd), "SELECT count(*) FROM antler_messages")).toBe(20);
  });

  it("with turns off keeps only the newest `last`, and the thread reads and runs on as before", async () => {
    const cwd = tempDir();
    const c = await client(cwd, { last: 2, turns: false });
    for (let turn = 0; turn < 3; turn++) await c.chat(`question ${turn}`, { threadId: "t" });
    await c.idle();
    expect(await history(checkpointsFile(cwd), "t")).toHaveLength(2);
    await c.chat("one more", { threadId: "t" });
    const messages = (await c.getThread("t")).messages;
    expect(messages).toHaveLength(16);
    expect(messages.at(-1)?.content).toBe("It is Oslo: 21°C, clear.");
  });

  it("a thread within the policy keeps every checkpoint, and drops only the pending writes of finished steps", async () => {
    const cwd = tempDir();
    const c = await client(cwd, { last: 1000 });
    await c.chat("question", { threadId: "t" });
    await c.idle();
    const before = count(checkpointsFile(cwd), "SELECT count(*) FROM checkpoints");
    expect(before).toBeGreaterThan(3);
    expect(count(checkpointsFile(cwd), "SELECT count(*) FROM writes")).toBe(0);
  });

  it("a failed pruning is logged with the run's trace id and never fails the run", async () => {
    const cwd = tempDir();
    const logs = captureLogs({ level: "warn" });
    // The real SQLite backend, except that its pruning fails.
    const failing = definePlugin({
      name: "failing-retention",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.storage.addBackend({
          id: "failing",
          async openCheckpointer(request) {
            const checkpointer = await openSqliteCheckpointer(join(request.baseDir, "cp.sqlite"));
            return {
              ...checkpointer,
              prune: async () => {
                throw new Error("disk on fire");
              },
            };
          },
        });
      },
    });
    const c = await AntlerClient.create({
      config: {
        models: [{ name: "m", provider: "scripted" }],
        storage: { backend: "sqlite", checkpointer: "failing" },
        title: { enabled: false },
      },
      plugins: [scriptedModelsPlugin({ m: toolThenAnswer }), weatherToolsPlugin, sqlitePlugin, failing],
      cwd,
      env: {},
      discover: false,
      logger: logs.logger,
    });
    clients.push(c);
    const result = await c.invoke("question", { threadId: "t" });
    expect(result.status).toBe("success");
    await c.idle();
    const line = logs.lines.find((l) => String(l.msg).includes("checkpoint retention failed"));
    expect(line?.trace_id).toBe(result.trace_id);
    expect(JSON.stringify(line)).toContain("disk on fire");
  });
});

describe("BackgroundPruner", () => {
  it("never prunes one thread twice at once, and runs once more for requests that came meanwhile", async () => {
    let active = 0;
    let most = 0;
    let runs = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const pruner = new BackgroundPruner(
      async () => {
        active++;
        most = Math.max(most, active);
        runs++;
        await gate;
        active--;
      },
      () => {},
    );
    pruner.request("a", "t1");
    await new Promise((resolve) => setImmediate(resolve));
    pruner.request("a", "t2");
    pruner.request("a", "t3");
    release();
    await pruner.idle();
    expect(most).toBe(1);
    expect(runs).toBe(2);
  });
});
