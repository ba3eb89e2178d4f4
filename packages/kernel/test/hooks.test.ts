import diagnosticsChannel from "node:diagnostics_channel";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/authoring.js";
import {
  createKernel,
  definePlugin,
  ensureTraceContext,
  getCurrentTraceId,
  HOOK_TIMING_CHANNEL,
  type HookTiming,
  type PluginContext,
} from "../src/index.js";

const p = (name: string, setup: (ctx: PluginContext) => void, dependsOn: string[] = []) =>
  definePlugin({ name, version: "1.0.0", kernel: "^0.1.0", dependsOn, setup });

describe("kernel hooks", () => {
  it("is a frozen object of hooks", async () => {
    const kernel = await createKernel({ discover: false });
    expect(Object.isFrozen(kernel.hooks)).toBe(true);
    expect(Object.keys(kernel.hooks).sort()).toEqual(
      ["assembleMiddleware", "assembleTools", "boot", "runEnd", "runError", "runStart", "start", "stop"].sort(),
    );
  });

  it("orders taps by named stage, then by plugin load order", async () => {
    const calls: string[] = [];
    const kernel = await createKernel({
      plugins: [
        p("a", (ctx) => ctx.hooks.start.tap(() => void calls.push("a:normal"))),
        p("b", (ctx) => ctx.hooks.start.tap(() => void calls.push("b:first"), { stage: "first" })),
        p("c", (ctx) => ctx.hooks.start.tap(() => void calls.push("c:late"), { stage: "late" })),
        p("d", (ctx) => ctx.hooks.start.tap(() => void calls.push("d:normal"))),
      ],
      discover: false,
    });
    await kernel.start();
    expect(calls).toEqual(["b:first", "a:normal", "d:normal", "c:late"]);
  });

  it("rejects an unknown stage name at setup", async () => {
    await expect(
      createKernel({ plugins: [p("x", (ctx) => ctx.hooks.start.tap(() => {}, { stage: "soon" as never }))], discover: false }),
    ).rejects.toThrow(/unknown hook stage "soon"/);
  });

  it("stops in reverse order, runs every stop tap even after a failure, and is idempotent", async () => {
    const calls: string[] = [];
    const kernel = await createKernel({
      plugins: [
        p("a", (ctx) => ctx.hooks.stop.tap(() => void calls.push("a"))),
        p("b", (ctx) =>
          ctx.hooks.stop.tap(() => {
            calls.push("b");
            throw new Error("b cannot stop");
          }),
        ),
        p("c", (ctx) => ctx.hooks.stop.tap(() => void calls.push("c"))),
      ],
      discover: false,
    });
    await kernel.start();
    const first = kernel.close();
    expect(kernel.close()).toBe(first);
    await expect(first).rejects.toThrow(/"b" failed to stop/);
    expect(calls).toEqual(["c", "b", "a"]);
  });

  it("closes everything when a start tap fails, and reports which plugin failed", async () => {
    const calls: string[] = [];
    const kernel = await createKernel({
      plugins: [
        p("db", (ctx) => {
          ctx.hooks.start.tap(() => void calls.push("db up"));
          ctx.hooks.stop.tap(() => void calls.push("db down"));
        }),
        p("broken", (ctx) =>
          ctx.hooks.start.tap(() => {
            throw new Error("port in use");
          }),
        ),
      ],
      discover: false,
    });
    await expect(kernel.start()).rejects.toThrow(/plugin "broken" failed to start: port in use/);
    expect(calls).toEqual(["db up", "db down"]);
    expect(kernel.status).toBe("closed");
  });

  it("times every tap and attributes it to its plugin on diagnostics_channel", async () => {
    const timings: HookTiming[] = [];
    const listener = (message: unknown) => void timings.push(message as HookTiming);
    diagnosticsChannel.subscribe(HOOK_TIMING_CHANNEL, listener);
    try {
      const kernel = await createKernel({
        plugins: [
          p("slow-starter", (ctx) => ctx.hooks.start.tap(() => new Promise((r) => setTimeout(r, 15)))),
          p("toolsmith", (ctx) =>
            ctx.tools.add(defineTool({ name: "noop", description: "does nothing", schema: z.object({}), run: () => "" })),
          ),
        ],
        discover: false,
        builtins: false,
      });
      await kernel.start();
      await kernel.getAvailableTools();
      const start = timings.find((t) => t.hook === "start");
      expect(start).toMatchObject({ plugin: "slow-starter", ok: true });
      expect(start?.durationMs).toBeGreaterThanOrEqual(10);
      expect(timings.find((t) => t.hook === "assembleTools")).toMatchObject({ plugin: "toolsmith", ok: true });
      expect(kernel.timings.length).toBe(timings.length);
    } finally {
      diagnosticsChannel.unsubscribe(HOOK_TIMING_CHANNEL, listener);
    }
  });

  it("fires run start and end around kernel.run with the run's trace id", async () => {
    const events: string[] = [];
    const kernel = await createKernel({
      plugins: [
        p("observer", (ctx) => {
          ctx.hooks.runStart.tap((run) => void events.push(`start ${run.traceId}`));
          ctx.hooks.runError.tap((run, err) => void events.push(`error ${run.traceId} ${(err as Error).message}`));
          ctx.hooks.runEnd.tap((run, outcome) => void events.push(`end ${run.traceId} ${outcome}`));
        }),
      ],
      discover: false,
    });
    await kernel.run(() => "ok", { traceId: "t-1" });
    await kernel.run(() => Promise.reject(new Error("bad")), { traceId: "t-2" }).catch(() => {});
    expect(events).toEqual(["start t-1", "end t-1 success", "start t-2", "error t-2 bad", "end t-2 error"]);
  });

  it("a run begun inside a trace scope takes the scope's id over a carried one, so its record and logs agree", async () => {
    const kernel = await createKernel({ discover: false });
    const ran = await ensureTraceContext("scope-id", () => kernel.run((run) => [run.traceId, getCurrentTraceId()], { traceId: "carried" }));
    expect(ran).toEqual(["scope-id", "scope-id"]);
    const begun = await ensureTraceContext("scope-id", () => kernel.beginRun({ traceId: "carried" }));
    await begun.end("success");
    expect(begun.context.traceId).toBe("scope-id");
    const outside = await kernel.beginRun({ traceId: "carried" });
    await outside.end("success");
    expect(outside.context.traceId).toBe("carried");
  });
});
