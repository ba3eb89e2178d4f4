// `GatewayRequest.followRun`: a contributed route follows a user's run through the run event log, numbered like
// the native stream, so protocol plugins can join and resume runs without reaching into the gateway.
import { definePlugin } from "@antler/kernel";
import { defineGatewayRoute, provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { BOB_KEY, collectSse, startTestGateway } from "./fixtures.js";

/** `GET /api/follow/:thread/:run?after=N`: the followed events as JSON, or 204 when nothing follows. */
const followPlugin = definePlugin({
  name: "follow-plugin",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    provideGatewayRoutes(ctx, {
      routes: [
        defineGatewayRoute({
          method: "GET",
          path: "/follow/:thread/:run",
          query: z.object({ after: z.coerce.number().int().optional() }),
          async handler({ params, query, followRun }) {
            const events = await followRun(params.thread ?? "", params.run ?? "", { afterSeq: query.after ?? 0 });
            if (events === null) return { status: 204 };
            const out = [];
            for await (const event of events) out.push(event);
            return { body: { events: out } };
          },
        }),
      ],
    });
  },
});

interface Followed {
  events: Array<{ seq: number; event: string; data: Record<string, unknown> }>;
}

describe("followRun for contributed routes", () => {
  it("yields a finished run's logged events with the native stream's ids, values whole, and resumes after a seq", async () => {
    const gw = await startTestGateway({ plugins: [followPlugin], script: [{ text: "Followed answer." }] });
    const thread = (await (await gw.call("/api/threads", { method: "POST", json: {} })).json()) as { thread_id: string };
    const native = await collectSse(
      await gw.call(`/api/threads/${thread.thread_id}/runs/stream`, { method: "POST", json: { message: "hi" } }),
    );
    const runId = (native[0]?.data as { run_id: string } | undefined)?.run_id ?? "";
    const followed = (await (await gw.call(`/api/follow/${thread.thread_id}/${runId}`)).json()) as Followed;
    expect(followed.events.map((e) => e.seq)).toEqual(native.map((f) => Number(f.id)));
    expect(followed.events.map((e) => e.event)).toEqual(native.map((f) => f.event));
    expect(followed.events[0]).toMatchObject({ seq: 1, event: "metadata", data: { run_id: runId, thread_id: thread.thread_id } });
    const lastValues = followed.events.filter((e) => e.event === "values").at(-1);
    // Whole state, not a patch: the messages themselves.
    expect(((lastValues?.data.messages ?? []) as Array<{ content: string }>).map((m) => m.content)).toEqual(["hi", "Followed answer."]);
    expect(followed.events.at(-1)?.event).toBe("end");

    const lastSeq = followed.events.at(-1)?.seq ?? 0;
    const tail = (await (await gw.call(`/api/follow/${thread.thread_id}/${runId}?after=${lastSeq - 1}`)).json()) as Followed;
    expect(tail.events.map((e) => e.seq)).toEqual([lastSeq]);
    // Nothing after the last event of a finished run: caught up.
    expect((await gw.call(`/api/follow/${thread.thread_id}/${runId}?after=${lastSeq}`)).status).toBe(204);
  });

  it("answers another user's run as not found, and a negative seq as a 400", async () => {
    const gw = await startTestGateway({ plugins: [followPlugin] });
    const thread = (await (await gw.call("/api/threads", { method: "POST", json: {} })).json()) as { thread_id: string };
    const native = await collectSse(
      await gw.call(`/api/threads/${thread.thread_id}/runs/stream`, { method: "POST", json: { message: "hi" } }),
    );
    const runId = (native[0]?.data as { run_id: string } | undefined)?.run_id ?? "";
    const bob = await gw.call(`/api/follow/${thread.thread_id}/${runId}`, { key: BOB_KEY });
    expect(bob.status).toBe(404);
    expect(((await bob.json()) as { error: { code: string } }).error.code).toMatch(/NOT_FOUND/);
    const negative = await gw.call(`/api/follow/${thread.thread_id}/${runId}?after=-1`);
    expect(negative.status).toBe(400);
  });
});
