import { definePlugin } from "@antler/kernel";
import { runRecordSchema } from "@antler/plugin-runtime";
import { defineGatewayRoute } from "@antler/plugin-runtime/routes";
import { describe, expect, it } from "vitest";
import { collectSse, startTestGateway } from "./fixtures.js";

const FRESH_ID = /^[0-9a-f]{32}$/;

describe("trace middleware", () => {
  it("keeps a valid X-Trace-Id and stamps it on the SSE frames and the run record", async () => {
    const gw = await startTestGateway();
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    const response = await gw.call("/api/threads/t/runs/stream", {
      method: "POST",
      json: { message: "hi" },
      headers: { "X-Trace-Id": "client-trace-42" },
    });
    expect(response.headers.get("x-trace-id")).toBe("client-trace-42");
    const frames = await collectSse(response);
    expect(frames[0]?.data).toMatchObject({ trace_id: "client-trace-42" });
    expect(frames.at(-1)).toMatchObject({ event: "end", data: { trace_id: "client-trace-42" } });
    const runs = (await (await gw.call("/api/threads/t/runs")).json()) as { runs: Array<{ trace_id: string }> };
    expect(runs.runs[0]?.trace_id).toBe("client-trace-42");
  });

  it("replaces an unusable X-Trace-Id (too long, blank) with a fresh id", async () => {
    const gw = await startTestGateway();
    for (const bad of ["x".repeat(513), "   "]) {
      const response = await gw.call("/api/models", { headers: { "X-Trace-Id": bad } });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-trace-id")).toMatch(FRESH_ID);
    }
  });

  it("never inherits: each request without a usable header gets its own id", async () => {
    const gw = await startTestGateway();
    const first = (await gw.call("/api/models", { headers: { "X-Trace-Id": "pinned-one" } })).headers.get("x-trace-id");
    const second = (await gw.call("/api/models", { headers: { "X-Trace-Id": "\t" } })).headers.get("x-trace-id");
    const third = (await gw.call("/api/models")).headers.get("x-trace-id");
    expect(first).toBe("pinned-one");
    expect(second).toMatch(FRESH_ID);
    expect(third).toMatch(FRESH_ID);
    expect(new Set([first, second, third]).size).toBe(3);
  });

  it("puts the header on error responses the gateway answers (401, 404, 400)", async () => {
    const gw = await startTestGateway();
    for (const [path, init, status] of [
      ["/api/threads", { key: null }, 401],
      ["/api/threads/nope", {}, 404],
      ["/api/nothing-here", {}, 404],
    ] as const) {
      const response = await gw.call(path, { ...init, headers: { "X-Trace-Id": `id-${status}` } });
      expect(response.status).toBe(status);
      expect(response.headers.get("x-trace-id")).toBe(`id-${status}`);
    }
  });

  it("answers an unhandled error with a coded, opaque 500 carrying the header, logs it with the id, then re-raises", async () => {
    const raised: Array<{ error: unknown; traceId: string }> = [];
    const gw = await startTestGateway({
      gateway: {
        routes: [
          {
            plugin: "test",
            route: defineGatewayRoute({
              method: "GET",
              path: "/explode",
              handler() {
                throw new TypeError("cannot read properties of undefined");
              },
            }),
          },
        ],
        onUnhandledError: (error, traceId) => raised.push({ error, traceId }),
      },
    });
    const response = await gw.call("/api/explode", { headers: { "X-Trace-Id": "boom-trace" } });
    expect(response.status).toBe(500);
    expect(response.headers.get("x-trace-id")).toBe("boom-trace");
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    // Coded and opaque: no error details leak to the caller, the trace id leads to them.
    const body = (await response.json()) as { error: { code: string; message: string; hint: string } };
    expect(body.error.code).toBe("ANTLER_ERR_INTERNAL");
    expect(JSON.stringify(body)).not.toContain("cannot read properties");
    expect(body.error.hint).toContain("boom-trace");
    expect(raised).toHaveLength(1);
    expect(raised[0]?.traceId).toBe("boom-trace");
    expect((raised[0]?.error as Error | undefined)?.message).toBe("cannot read properties of undefined");
    const line = gw.logs.find((l) => l.msg === "unhandled error");
    expect(line).toMatchObject({ trace_id: "boom-trace", level: "error" });
  });

  it("lets a failure in the middle of a stream through unchanged: 200 already sent, an error frame, the record says error", async () => {
    // A middleware that fails after the model answered: frames were already sent when it throws.
    const failing = definePlugin({
      name: "failing-middleware",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.middleware.add({
          name: "explode",
          afterModel: () => {
            throw new Error("post-processing exploded");
          },
        });
      },
    });
    const gw = await startTestGateway({ script: [{ text: "partial answer" }], plugins: [failing] });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    const response = await gw.call("/api/threads/t/runs/stream", {
      method: "POST",
      json: { message: "hi" },
      headers: { "X-Trace-Id": "mid" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-trace-id")).toBe("mid");
    const frames = await collectSse(response);
    expect(frames.at(-1)?.event).toBe("error");
    expect((frames.at(-1)?.data as { message: string } | undefined)?.message).toContain("post-processing exploded");
    expect(frames.some((f) => f.event === "messages-tuple")).toBe(true);
    expect((frames.at(-1)?.data as { trace_id: string } | undefined)?.trace_id).toBe("mid");
    const runs = (await (await gw.call("/api/threads/t/runs")).json()) as { runs: Array<{ status: string; error: string }> };
    expect(runs.runs[0]?.status).toBe("error");
    expect(runs.runs[0]?.error).toContain("post-processing exploded");
  });

  it("replaces a trace id sent in metadata or context, drops server-owned keys, and redacts secrets in the stored kwargs", async () => {
    const gw = await startTestGateway();
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t", metadata: { antler_trace_id: "thread-level", topic: "x" } } });
    const response = await gw.call("/api/threads/t/runs/wait", {
      method: "POST",
      headers: { "X-Trace-Id": "header-wins" },
      json: {
        message: "hi",
        metadata: { antler_trace_id: "forged-meta", trace_id: "forged-2", source: "web" },
        context: {
          antler_trace_id: "forged-ctx",
          non_interactive: true,
          user_id: "bob",
          sandbox_id: "sb-1",
          plan_mode: true,
          api_key: "sk-abcdefghijklmnopqrstuvwxyz",
        },
        config: { metadata: { antler_trace_id: "forged-config" } },
      },
    });
    expect(response.status).toBe(200);
    const result = (await response.json()) as { trace_id: string; run_id: string };
    expect(result.trace_id).toBe("header-wins");
    const run = runRecordSchema.parse(await (await gw.call(`/api/threads/t/runs/${result.run_id}`)).json());
    expect(run.trace_id).toBe("header-wins");
    expect(run.kwargs.metadata).toEqual({ source: "web", antler_trace_id: "header-wins" });
    const context = run.kwargs.context as Record<string, unknown>;
    expect(context.antler_trace_id).toBe("header-wins");
    expect(context.user_id).toBe("alice");
    expect(context.non_interactive).toBeUndefined();
    expect(context.sandbox_id).toBeUndefined();
    expect(context.plan_mode).toBe(true);
    expect(context.api_key).toBe("[REDACTED]");
    // Thread metadata never holds a trace id: a thread spans many runs.
    const thread = (await (await gw.call("/api/threads/t")).json()) as { metadata: Record<string, unknown> };
    expect(thread.metadata).toEqual({ topic: "x" });
  });

  it("exposes X-Trace-Id through CORS: on the preflight, and in Access-Control-Expose-Headers of the response", async () => {
    const gw = await startTestGateway();
    const preflight = await fetch(`${gw.url}/api/threads`, {
      method: "OPTIONS",
      headers: {
        Origin: "http://app.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, x-trace-id",
        "X-Trace-Id": "preflight-id",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("http://app.example");
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("x-trace-id");
    expect(preflight.headers.get("x-trace-id")).toBe("preflight-id");
    const response = await gw.call("/api/models", { headers: { Origin: "http://app.example" } });
    expect(response.headers.get("access-control-allow-origin")).toBe("http://app.example");
    const exposed = response.headers.get("access-control-expose-headers")?.toLowerCase().split(/,\s*/);
    // What cross-origin front ends read: the trace id, a run's id and place (LangGraph's SDK rejoins by it).
    for (const header of ["x-trace-id", "x-run-id", "content-location", "location", "x-pagination-next"]) expect(exposed).toContain(header);
    expect(response.headers.get("x-trace-id")).toMatch(FRESH_ID);
    const other = await gw.call("/api/models", { headers: { Origin: "http://evil.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });
});
