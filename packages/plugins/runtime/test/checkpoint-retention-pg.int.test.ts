import { describeWithPostgres, runKernelCommand, usePostgresSchema } from "@antler/kernel/testing";
import type { BaseMessage } from "@langchain/core/messages";
import { afterEach, expect, it } from "vitest";
import type { AntlerClient } from "../src/client/client.js";
import { schemaQuery, weatherClient } from "./fixtures/weather.js";
import { tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

describeWithPostgres("checkpoint retention on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_retention" });

  const count = schemaQuery(url, () => schema.name);

  async function client(keep: { last: number; turns?: boolean }) {
    const c = await weatherClient({
      storage: { backend: "postgres", postgres_url: url, postgres_schema: schema.name, checkpoint: { keep } },
      cwd: tempDir(),
    });
    clients.push(c);
    return c;
  }

  it("keeps the newest `last` checkpoints and every turn's last, drops finished writes, and only blobs nothing names", async () => {
    const c = await client({ last: 3 });
    const afterTurn: string[] = [];
    for (let turn = 0; turn < 5; turn++) {
      await c.chat(`question ${turn}`, { threadId: "t" });
      await c.idle();
      afterTurn.push(JSON.stringify((await c.getThread("t")).messages.map((m) => m.content)));
    }
    expect(await count("SELECT count(*) FROM $schema.checkpoints")).toBe(7);
    expect(await count("SELECT count(*) FROM $schema.checkpoint_writes")).toBe(0);
    // No blob is left that no checkpoint names, and every blob a checkpoint names is there.
    expect(
      await count(`SELECT count(*) FROM $schema.checkpoint_blobs b WHERE NOT EXISTS (SELECT 1 FROM $schema.checkpoints c
        WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns AND c.checkpoint->'channel_versions'->>b.channel = b.version)`),
    ).toBe(0);
    expect(
      await count(`SELECT count(*) FROM $schema.checkpoints c, jsonb_each_text(c.checkpoint->'channel_versions') v
        WHERE NOT EXISTS (SELECT 1 FROM $schema.checkpoint_blobs b WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
          AND b.channel = v.key AND b.version = v.value)`),
    ).toBe(0);
    // Every turn's end can still be read (time travel), through the saver the runtime uses.
    const checkpointer = await c.kernel.openCheckpointer();
    try {
      const states: string[] = [];
      for await (const tuple of checkpointer.saver.list({ configurable: { thread_id: "default/t", checkpoint_ns: "" } })) {
        const messages = (tuple.checkpoint.channel_values.messages as BaseMessage[] | undefined) ?? [];
        states.push(JSON.stringify(messages.map((m) => m.content)));
      }
      for (const state of afterTurn) expect(states).toContain(state);
    } finally {
      await checkpointer.close();
    }
    // And the thread runs on.
    await c.chat("again", { threadId: "t" });
    expect((await c.getThread("t")).messages).toHaveLength(24);
    await c.idle();
  });

  it("`antler storage compact` applies a tighter policy now, and --dry-run changes nothing", async () => {
    const loose = await client({ last: 1000 });
    for (let turn = 0; turn < 3; turn++) await loose.chat(`question ${turn}`, { threadId: "t" });
    await loose.close();
    clients.length = 0;
    const all = await count("SELECT count(*) FROM $schema.checkpoints");
    expect(all).toBeGreaterThan(10);

    const tight = await client({ last: 1, turns: true });
    const dry = await runKernelCommand(tight.kernel, ["storage", "compact", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`default/t: ${all} → 3 checkpoints`);
    expect(await count("SELECT count(*) FROM $schema.checkpoints")).toBe(all);

    const run = await runKernelCommand(tight.kernel, ["storage", "compact", "--thread", "t", "--vacuum"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`default/t: ${all} → 3 checkpoints, [\\d.]+ KiB → [\\d.]+ KiB`));
    expect(run.stdout).toContain("Vacuumed.");
    expect(await count("SELECT count(*) FROM $schema.checkpoints")).toBe(3);
    expect((await tight.getThread("t")).messages).toHaveLength(12);

    const unknown = await runKernelCommand(tight.kernel, ["storage", "compact", "--thread", "nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no checkpoints for thread nope");
  });
});
