import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { RUNS_PER_CONNECTION } from "@antler/plugin-runtime";
import { expect, it } from "vitest";
import { collectSse, startTestGateway } from "./fixtures.js";

// Issue 26 / G2: 200 concurrent streaming runs on one instance with a small PostgreSQL pool. Each run either
// ends in success or is refused with a coded 503 before it started; none fails midway, none is declared dead.

const RUNS = 200;
const POOL_MAX = 5;

function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describeWithPostgres("run admission on PostgreSQL with a small pool", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_gw_capacity" });

  it(`of ${RUNS} concurrent streaming runs with pool.max ${POOL_MAX}, those past the derived limit get 503 + Retry-After before starting and the rest succeed`, async () => {
    // The model answers only once every request has been answered (200 and streaming, or refused), so exactly
    // the runs admitted while the others arrived are live at once: the count is not a matter of timing.
    const everyoneAnswered = gate();
    const gw = await startTestGateway({
      kernelConfig: {
        storage: { backend: "postgres", postgres_url: url, postgres_schema: schema.name, postgres: { pool: { max: POOL_MAX } } },
        logging: { level: "info" },
      },
      script: {
        respond: async (messages) => {
          await everyoneAnswered.opened;
          return { text: `reply to ${String(messages.at(-1)?.content)}` };
        },
      },
      client: { runLeases: { heartbeatMs: 500, leaseMs: 3000 } },
    });
    const threads = Array.from({ length: RUNS }, (_, i) => `cap-${i}`);
    for (let i = 0; i < RUNS; i += 25) {
      await Promise.all(threads.slice(i, i + 25).map((id) => gw.call("/api/threads", { method: "POST", json: { thread_id: id } })));
    }

    const responses = await Promise.all(
      threads.map((id) => gw.call(`/api/threads/${id}/runs/stream`, { method: "POST", json: { message: `prompt ${id}` } })),
    );
    everyoneAnswered.open();

    const limit = POOL_MAX * RUNS_PER_CONNECTION;
    const accepted = threads.filter((_, i) => responses[i]?.status === 200);
    const refused = threads.filter((_, i) => responses[i]?.status !== 200);
    expect(accepted).toHaveLength(limit);
    expect(refused).toHaveLength(RUNS - limit);

    // Refused: a coded 503 with Retry-After, and nothing of the run recorded.
    for (const [i, id] of threads.entries()) {
      const response = responses[i] as Response;
      if (response.status === 200) continue;
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("2");
      expect(await response.json()).toMatchObject({
        error: { code: "ANTLER_ERR_RUNS_AT_CAPACITY", details: { max_active_runs: limit, retry_after_seconds: 2 } },
      });
      const runs = (await (await gw.call(`/api/threads/${id}/runs`)).json()) as { runs: unknown[] };
      expect(runs.runs).toEqual([]);
    }

    // Accepted: each stream ends with `end` and no error frame; each record says success.
    const streams = await Promise.all(threads.map((_, i) => (responses[i]?.status === 200 ? collectSse(responses[i] as Response) : null)));
    for (const frames of streams) {
      if (frames === null) continue;
      expect(frames.filter((f) => f.event === "error")).toEqual([]);
      expect(frames.at(-1)?.event).toBe("end");
    }
    for (const id of accepted) {
      const runs = (await (await gw.call(`/api/threads/${id}/runs`)).json()) as { runs: Array<{ status: string; error: string | null }> };
      expect(runs.runs).toEqual([expect.objectContaining({ status: "success", error: null })]);
    }

    // Nothing was declared dead or stopped by its own instance, and no statement failed.
    const trouble = gw.logs.filter((line) => /lease|no longer running|failed/i.test(String(line.msg)));
    expect(trouble).toEqual([]);

    // A refused caller that retries once the burst is over gets its run.
    const retry = await gw.call(`/api/threads/${refused[0]}/runs/stream`, { method: "POST", json: { message: "again" } });
    expect(retry.status).toBe(200);
    expect((await collectSse(retry)).at(-1)?.event).toBe("end");
  });
});
