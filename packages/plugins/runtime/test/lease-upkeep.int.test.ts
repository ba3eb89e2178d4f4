import { setTimeout as sleep } from "node:timers/promises";
import { type AntlerDatabase, definePlugin, KERNEL_VERSION } from "@antler/kernel";
import { describeWithPostgres, scriptedModelsPlugin, usePostgresSchema } from "@antler/kernel/testing";
import { openPostgresDatabase } from "@antler/plugin-storage-postgres";
import { sql } from "kysely";
import { afterEach, expect, it } from "vitest";
import { AntlerClient } from "../src/client/client.js";
import type { StreamEvent } from "../src/client/events.js";
import { RUNS_TABLE, type RunsTable } from "../src/stores/runs.js";
import { tempDir } from "./fixtures.js";
import { createDatabase } from "./storage.js";

// Pool starvation must not make an instance declare its own live runs dead: the heartbeat renews leases on
// the database handle's upkeep connections, which run traffic never takes.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** Storage backend `pg-observed`: the postgres backend, handing the test every database handle it opens. */
function observedPostgres(url: string, opened: AntlerDatabase[]) {
  return definePlugin({
    name: "observed-postgres",
    version: "1.0.0",
    kernel: `^${KERNEL_VERSION}`,
    setup(ctx) {
      ctx.storage.addBackend({
        id: "pg-observed",
        async openDatabase(request) {
          const database = await openPostgresDatabase(url, {
            schema: request.schema,
            logger: request.logger,
            pool: request.storage.postgres.pool,
          });
          opened.push(database);
          return database;
        },
      });
    },
  });
}

function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describeWithPostgres("run leases while the database pool is starved", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_lease_upkeep" });

  it("renews a live run's lease past its expiry while every pool connection is held, and the run ends in success", async () => {
    const leaseMs = 600;
    const opened: AntlerDatabase[] = [];
    const modelEntered = gate();
    const modelMayAnswer = gate();
    const dir = tempDir();
    const client = await AntlerClient.create({
      config: {
        models: [{ name: "m", provider: "scripted" }],
        storage: {
          backend: "pg-observed",
          checkpointer: "memory",
          postgres_schema: schema.name,
          postgres: { pool: { max: 2, acquire_timeout_ms: 300 } },
        },
        title: { enabled: false },
        logging: { level: "error" },
      },
      plugins: [
        observedPostgres(url, opened),
        scriptedModelsPlugin({
          m: async () => {
            modelEntered.open();
            await modelMayAnswer.opened;
            return { text: "still here" };
          },
        }),
      ],
      cwd: dir,
      env: {},
      discover: false,
      runLeases: { heartbeatMs: 100, leaseMs },
    });
    cleanups.push(() => client.close());
    const observer = await createDatabase({ backend: "postgres", postgres_url: url }, { baseDir: dir, schema: schema.name });
    cleanups.push(() => observer.close());

    const events: StreamEvent[] = [];
    const run = (async () => {
      for await (const event of client.stream("hi", { threadId: "starved", runId: "run-starved" })) events.push(event);
    })();
    // A failing test still lets go of the pool and the model (cleanups run in reverse: these before the client closes).
    const release = gate();
    cleanups.push(async () => {
      release.open();
      modelMayAnswer.open();
      await run.catch(() => undefined);
    });
    await modelEntered.opened;
    const [database] = opened;
    if (!database) throw new Error("the client opened no database");

    // Take every connection of the pool the run's own statements use, and keep them.
    const held = Array.from({ length: 2 }, () => {
      const taken = gate();
      const done = database.db.connection().execute(async () => {
        taken.open();
        await release.opened;
      });
      return { taken: taken.opened, done };
    });
    await Promise.all(held.map((h) => h.taken));
    const heldSince = Date.now();
    await expect(sql`select 1`.execute(database.db)).rejects.toThrow(/timeout exceeded when trying to connect/);

    // The lease the run had when the pool was taken would have run out by heldSince + leaseMs; wait until the
    // record shows one renewed beyond that, with the pool still held.
    const leaseOf = async () =>
      await observer.db
        .withTables<{ antler_runs: RunsTable }>()
        .selectFrom(RUNS_TABLE)
        .select(["lease_until", "status"])
        .where("run_id", "=", "run-starved")
        .executeTakeFirstOrThrow();
    const giveUpAt = Date.now() + 20 * leaseMs;
    for (;;) {
      const row = await leaseOf();
      expect(row.status).toBe("running");
      if (row.lease_until !== null && Date.parse(row.lease_until) > heldSince + leaseMs) break;
      if (Date.now() > giveUpAt) throw new Error(`the lease was not renewed while the pool was held (lease_until ${row.lease_until})`);
      await sleep(50);
    }

    release.open();
    await Promise.all(held.map((h) => h.done));
    modelMayAnswer.open();
    await run;
    expect(events.at(-1)?.type).toBe("end");
    expect((await leaseOf()).status).toBe("success");
  });
});
