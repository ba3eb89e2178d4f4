import { type AntlerError, isAntlerError } from "@antler/kernel";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { AntlerClient } from "../src/client/client.js";
import type { StreamEvent } from "../src/client/events.js";
import { RuntimeErrorCodes } from "../src/errors.js";
import { tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

async function drain(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function gatedClient(maxActiveRuns: number | undefined) {
  const entered = gate();
  const answer = gate();
  const client = await AntlerClient.create({
    config: {
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "memory" },
      title: { enabled: false },
      logging: { level: "error" },
    },
    plugins: [
      scriptedModelsPlugin({
        m: async () => {
          entered.open();
          await answer.opened;
          return { text: "done" };
        },
      }),
    ],
    cwd: tempDir(),
    env: {},
    discover: false,
    ...(maxActiveRuns === undefined ? {} : { maxActiveRuns }),
  });
  clients.push(client);
  return { client, entered, answer };
}

describe("maxActiveRuns", () => {
  it("refuses a run past the limit before it starts: RUNS_AT_CAPACITY with a retry hint, no record, no thread", async () => {
    const { client, entered, answer } = await gatedClient(1);
    const first = drain(client.stream("one", { threadId: "first" }));
    await entered.opened;
    const refusal = await drain(client.stream("two", { threadId: "second" })).catch((error: unknown) => error);
    expect(isAntlerError(refusal, RuntimeErrorCodes.RUNS_AT_CAPACITY)).toBe(true);
    expect((refusal as AntlerError).details).toEqual({ max_active_runs: 1, retry_after_seconds: 2 });
    expect(await client.listThreads()).toEqual([expect.objectContaining({ thread_id: "first" })]);
    answer.open();
    expect((await first).at(-1)?.type).toBe("end");
    // The slot is free again once the run has ended.
    expect((await drain(client.stream("three", { threadId: "second" }))).at(-1)?.type).toBe("end");
    expect((await client.listRuns("second")).map((r) => r.status)).toEqual(["success"]);
  });

  it("has no default limit on a backend without a connection pool (in-memory SQLite)", async () => {
    const { client, answer } = await gatedClient(undefined);
    const runs = Array.from({ length: 30 }, (_, i) => drain(client.stream(`run ${i}`, { threadId: `t${i}` })));
    answer.open();
    const ends = await Promise.all(runs);
    expect(ends.every((events) => events.at(-1)?.type === "end")).toBe(true);
  });

  it.each([0, -1, 1.5])("rejects maxActiveRuns %s with a coded config error naming the option", async (value) => {
    const error = await AntlerClient.create({
      config: { storage: { backend: "memory" } },
      env: {},
      discover: false,
      maxActiveRuns: value,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "ANTLER_ERR_CONFIG_INVALID", where: "maxActiveRuns" });
    expect(String((error as Error).message)).toContain("whole number of runs, at least 1");
  });
});
