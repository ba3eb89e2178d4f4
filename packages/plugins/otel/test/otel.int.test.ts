import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type CodePlugin, definePlugin, type KernelConfigInput } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { type Script, scriptedModelsPlugin, startOpenAICompatibleServer } from "@antler/kernel/testing";
import openaiPlugin from "@antler/plugin-openai";
import { AntlerClient } from "@antler/plugin-runtime";
import subagentsPlugin from "@antler/plugin-subagents";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ALICE_KEY, startTestGateway } from "../../gateway/test/fixtures.js";
import { type OtelConfigInput, type OtelHandle, otelPlugin } from "../src/index.js";
import { type ReceivedSpan, startOtlpReceiver } from "./receiver.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const echoTools = definePlugin({
  name: "test-echo",
  version: "0.1.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(defineTool({ name: "echo", description: "Echoes.", schema: z.object({ text: z.string() }), run: ({ text }) => text }));
  },
});

/** The otel plugin pointed at `endpoint`, and a handle that fills in when the kernel starts. */
function tracingPlugin(endpoint: string, config: Partial<OtelConfigInput> = {}): { plugin: CodePlugin; handle: () => OtelHandle } {
  let handle: OtelHandle | undefined;
  const plugin = otelPlugin({
    onStart: (h) => {
      handle = h;
    },
  });
  return {
    plugin: { plugin, config: { endpoint, export_delay_ms: 50, export_timeout_ms: 1000, ...config } },
    handle: () => {
      if (!handle) throw new Error("the otel plugin has not started");
      return handle;
    },
  };
}

async function receiver() {
  const r = await startOtlpReceiver();
  cleanups.push(() => r.close());
  return r;
}

async function client(plugins: CodePlugin[], config: KernelConfigInput, models: Record<string, Script> = {}) {
  const cwd = mkdtempSync(join(tmpdir(), "antler-otel-test-"));
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  const c = await AntlerClient.create({
    config: { storage: { backend: "memory" }, title: { enabled: false }, logging: { level: "warn" }, ...config },
    plugins: [scriptedModelsPlugin(models), echoTools, ...plugins],
    cwd,
    env: {},
    discover: false,
  });
  cleanups.push(() => c.close());
  return c;
}

/**
 * Flushes, then waits until the receiver holds spans matching `done`: an export already in flight when the flush
 * starts may still be on the wire when it returns.
 */
async function received(handle: OtelHandle, spans: readonly ReceivedSpan[], done: (spans: readonly ReceivedSpan[]) => boolean) {
  await handle.tracing?.forceFlush();
  const deadline = Date.now() + 10_000;
  while (!done(spans)) {
    if (Date.now() > deadline)
      throw new Error(`the receiver did not get the expected spans; it has: ${spans.map((s) => s.name).join(", ")}`);
    await sleep(20);
  }
}

const byName = (spans: readonly ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);
function one(spans: readonly ReceivedSpan[], predicate: (s: ReceivedSpan) => boolean, what: string): ReceivedSpan {
  const found = spans.filter(predicate);
  if (found.length !== 1) throw new Error(`expected one ${what}, found ${found.length}: ${spans.map((s) => s.name).join(", ")}`);
  return found[0] as ReceivedSpan;
}

describe("OpenTelemetry export over OTLP/HTTP", () => {
  it("a run with two tool calls and a subagent yields run → model/tool spans, the subagent's run under its task span, one trace", async () => {
    const otlp = await receiver();
    const tracing = tracingPlugin(otlp.url, { service_name: "antler-test", headers: { authorization: "Basic dGVzdDp0ZXN0" } });
    const lead: Script = [
      {
        toolCalls: [
          { name: "echo", args: { text: "one" } },
          { name: "echo", args: { text: "two" } },
        ],
        usage: { input_tokens: 11, output_tokens: 7 },
      },
      {
        toolCalls: [{ name: "task", args: { description: "check", prompt: "Say done.", subagent_type: "general-purpose" } }],
        usage: { input_tokens: 13, output_tokens: 5 },
      },
      { text: "All done.", usage: { input_tokens: 17, output_tokens: 3 } },
    ];
    const c = await client(
      [{ plugin: subagentsPlugin, config: { agents: { "general-purpose": { model: "sub" } } } }, tracing.plugin],
      {
        models: [
          { name: "lead", provider: "scripted" },
          { name: "sub", provider: "scripted" },
        ],
        default_model: "lead",
        subagents: { enabled: true },
      },
      { lead, sub: [{ text: "done", usage: { input_tokens: 5, output_tokens: 1 } }] },
    );
    let antlerTraceId = "";
    for await (const event of c.stream("Go.", { userId: "alice", threadId: "t-otel" })) {
      if (event.type === "end") antlerTraceId = event.data.trace_id;
    }
    await received(tracing.handle(), otlp.spans, (s) => s.length >= 9 && byName(s, "invoke_agent").length === 2);

    const spans = otlp.spans;
    expect(spans.length).toBeGreaterThanOrEqual(9);
    // One trace, and the OTel trace id is the Antler trace id itself (Antler generates 32 hex digits).
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([antlerTraceId]));
    for (const s of spans) {
      expect(s.attributes["antler.trace_id"], s.name).toBe(antlerTraceId);
      expect(s.service).toBe("antler-test");
    }
    const runs = byName(spans, "invoke_agent");
    expect(runs).toHaveLength(2);
    const leadRun = one(runs, (s) => s.parentSpanId === undefined, "root run span");
    const subRun = one(runs, (s) => s.parentSpanId !== undefined, "subagent run span");
    expect(leadRun.attributes["antler.thread_id"]).toBe("t-otel");
    expect(leadRun.attributes["antler.run.outcome"]).toBe("success");
    // Hashed by default: never the user id itself.
    expect(leadRun.attributes["user.id"]).toMatch(/^[0-9a-f]{32}$/);
    expect(leadRun.attributes["user.id"]).not.toBe("alice");

    const leadChats = byName(spans, "chat lead");
    expect(leadChats).toHaveLength(3);
    for (const chat of leadChats) {
      expect(chat.parentSpanId).toBe(leadRun.spanId);
      expect(chat.attributes["gen_ai.request.model"]).toBe("lead");
      expect(chat.attributes["antler.run_id"]).toBe(leadRun.attributes["antler.run_id"]);
    }
    expect(leadChats.map((s) => s.attributes["gen_ai.usage.input_tokens"]).sort()).toEqual([11, 13, 17]);
    expect(leadChats.map((s) => s.attributes["gen_ai.usage.output_tokens"]).sort()).toEqual([3, 5, 7]);

    const echoes = byName(spans, "execute_tool echo");
    expect(echoes).toHaveLength(2);
    for (const e of echoes) expect(e.parentSpanId).toBe(leadRun.spanId);
    const task = one(spans, (s) => s.name === "execute_tool task", "task tool span");
    expect(task.parentSpanId).toBe(leadRun.spanId);
    expect(subRun.parentSpanId).toBe(task.spanId);
    expect(subRun.attributes["antler.run.parent_run_id"]).toBe(leadRun.attributes["antler.run_id"]);
    expect(subRun.attributes["antler.run_id"]).not.toBe(leadRun.attributes["antler.run_id"]);
    const subChat = one(spans, (s) => s.name === "chat sub", "subagent model span");
    expect(subChat.parentSpanId).toBe(subRun.spanId);
    // The subagent ran inside the task call, and the task call inside the lead run. The SDK anchors each span's
    // clock on Date.now() when it starts, so two spans' timestamps can disagree by up to a millisecond.
    const ms = 1_000_000n;
    expect(subRun.startNs >= task.startNs - ms && subRun.endNs <= task.endNs + ms).toBe(true);
    expect(task.endNs <= leadRun.endNs + ms).toBe(true);
    // The configured headers went out with the export (e.g. Langfuse basic auth).
    expect(otlp.exports[0]?.authorization).toBe("Basic dGVzdDp0ZXN0");
  });

  it("records middleware hook spans when middleware_span_ratio is 1, and none at the default 0", async () => {
    const withHooks = await receiver();
    const on = tracingPlugin(withHooks.url, { middleware_span_ratio: 1 });
    const c1 = await client([on.plugin], { models: [{ name: "m", provider: "scripted" }] }, { m: [{ text: "hi" }] });
    await c1.chat("Hello.", { threadId: "t-hooks" });
    await received(on.handle(), withHooks.spans, (s) => byName(s, "invoke_agent").length === 1);
    const run = one(withHooks.spans, (s) => s.name === "invoke_agent", "run span");
    const chat = one(withHooks.spans, (s) => s.name === "chat m", "model span");
    const hooks = withHooks.spans.filter((s) => s.name.startsWith("middleware "));
    // The default chain's wrap hooks nest inside the model call, outermost first (Uploads: ThreadData has no hooks
    // since folders are made by the first write), as the onion runs them.
    const outermost = one(hooks, (s) => s.name === "middleware Uploads.wrapModelCall", "Uploads span");
    expect(outermost.parentSpanId).toBe(chat.spanId);
    const errorHandling = one(hooks, (s) => s.name === "middleware LLMErrorHandling.wrapModelCall", "LLMErrorHandling span");
    const ids = new Map(withHooks.spans.map((s) => [s.spanId, s]));
    let up: ReceivedSpan | undefined = errorHandling;
    const chain: string[] = [];
    while (up) {
      chain.push(up.name);
      up = up.parentSpanId ? ids.get(up.parentSpanId) : undefined;
    }
    expect(chain.slice(-3)).toEqual(["middleware Uploads.wrapModelCall", "chat m", "invoke_agent"]);
    for (const h of hooks) {
      expect(h.traceId).toBe(run.traceId);
      expect(h.attributes["antler.middleware.name"]).toBeTruthy();
      expect(h.attributes["antler.middleware.hook"]).toMatch(
        /^(beforeAgent|beforeModel|afterModel|afterAgent|wrapModelCall|wrapToolCall)$/,
      );
    }

    const without = await receiver();
    const off = tracingPlugin(without.url, { user: "omitted" });
    const c2 = await client([off.plugin], { models: [{ name: "m", provider: "scripted" }] }, { m: [{ text: "hi" }] });
    await c2.chat("Hello.", { threadId: "t-nohooks", userId: "bob" });
    await received(off.handle(), without.spans, (s) => byName(s, "invoke_agent").length === 1);
    expect(without.spans.filter((s) => s.name.startsWith("middleware "))).toEqual([]);
    expect(without.spans.map((s) => s.name).sort()).toEqual(["chat m", "invoke_agent"]);
    for (const s of without.spans) expect(s.attributes["user.id"]).toBeUndefined();
  });

  it("a W3C traceparent sent to the gateway parents the run span", async () => {
    const otlp = await receiver();
    const tracing = tracingPlugin(otlp.url);
    const gateway = await startTestGateway({ plugins: [tracing.plugin] });
    const created = await gateway.call("/api/threads", { method: "POST", json: {} });
    const { thread_id: threadId } = (await created.json()) as { thread_id: string };
    const remoteTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const remoteSpan = "00f067aa0ba902b7";
    const res = await fetch(`${gateway.url}/api/threads/${threadId}/runs/wait`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${ALICE_KEY}`,
        "content-type": "application/json",
        traceparent: `00-${remoteTrace}-${remoteSpan}-01`,
      },
      body: JSON.stringify({ input: { messages: [{ role: "user", content: "Hi" }] } }),
    });
    expect(res.status).toBe(200);
    const { trace_id: antlerTraceId } = (await res.json()) as { trace_id: string };
    await received(tracing.handle(), otlp.spans, (s) => byName(s, "invoke_agent").length === 1);
    const run = one(otlp.spans, (s) => s.name === "invoke_agent", "run span");
    expect(run.traceId).toBe(remoteTrace);
    expect(run.parentSpanId).toBe(remoteSpan);
    expect(run.attributes["antler.trace_id"]).toBe(antlerTraceId);
    for (const s of otlp.spans) expect(s.traceId).toBe(remoteTrace);

    // Without one, the next run starts a trace of its own.
    const plain = await gateway.call(`/api/threads/${threadId}/runs/wait`, {
      method: "POST",
      json: { input: { messages: [{ role: "user", content: "Again" }] } },
    });
    expect(plain.status).toBe(200);
    await received(tracing.handle(), otlp.spans, (s) => byName(s, "invoke_agent").length === 2);
    const runs = byName(otlp.spans, "invoke_agent");
    expect(runs).toHaveLength(2);
    expect(runs[1]?.parentSpanId).toBeUndefined();
    expect(runs[1]?.traceId).not.toBe(remoteTrace);
  });

  it("an unsampled traceparent cannot switch tracing off: the run is still recorded, in the caller's trace", async () => {
    const otlp = await receiver();
    const tracing = tracingPlugin(otlp.url);
    const gateway = await startTestGateway({ plugins: [tracing.plugin] });
    const created = await gateway.call("/api/threads", { method: "POST", json: {} });
    const { thread_id: threadId } = (await created.json()) as { thread_id: string };
    const remoteTrace = "0af7651916cd43dd8448eb211c80319c";
    const remoteSpan = "b7ad6b7169203331";
    const res = await fetch(`${gateway.url}/api/threads/${threadId}/runs/wait`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${ALICE_KEY}`,
        "content-type": "application/json",
        // Flags 00: "not sampled". sample_ratio is 1, so the operator asked for every run.
        traceparent: `00-${remoteTrace}-${remoteSpan}-00`,
      },
      body: JSON.stringify({ input: { messages: [{ role: "user", content: "Hi" }] } }),
    });
    expect(res.status).toBe(200);
    await received(tracing.handle(), otlp.spans, (s) => byName(s, "invoke_agent").length === 1);
    const run = one(otlp.spans, (s) => s.name === "invoke_agent", "run span");
    expect(run.traceId).toBe(remoteTrace);
    expect(run.parentSpanId).toBe(remoteSpan);
    expect(byName(otlp.spans, "chat m")).toHaveLength(1);
  });

  it("an outgoing provider request carries traceparent of its model-call span next to X-Trace-Id", async () => {
    const otlp = await receiver();
    const provider = await startOpenAICompatibleServer({ script: [{ text: "Hello from the provider." }] });
    cleanups.push(() => provider.close());
    const tracing = tracingPlugin(otlp.url);
    const c = await client([openaiPlugin, tracing.plugin], {
      models: [{ name: "gpt", provider: "openai", model: "scripted-model", base_url: provider.url, api_key: "sk-test", max_retries: 0 }],
    });
    expect(await c.chat("Hi", { threadId: "t-provider" })).toBe("Hello from the provider.");
    await received(tracing.handle(), otlp.spans, (s) => byName(s, "chat gpt").length === 1);
    const chat = one(otlp.spans, (s) => s.name === "chat gpt", "model span");
    const request = provider.requests.find((r) => r.path.endsWith("/chat/completions"));
    expect(request?.headers.traceparent).toBe(`00-${chat.traceId}-${chat.spanId}-01`);
    expect(request?.headers["x-trace-id"]).toBe(chat.attributes["antler.trace_id"]);
  });

  it("propagate: false leaves outgoing requests without traceparent", async () => {
    const otlp = await receiver();
    const provider = await startOpenAICompatibleServer({ script: [{ text: "ok" }] });
    cleanups.push(() => provider.close());
    const tracing = tracingPlugin(otlp.url, { propagate: false });
    const c = await client([openaiPlugin, tracing.plugin], {
      models: [{ name: "gpt", provider: "openai", model: "scripted-model", base_url: provider.url, api_key: "sk-test", max_retries: 0 }],
    });
    await c.chat("Hi", { threadId: "t-noprop" });
    const request = provider.requests.find((r) => r.path.endsWith("/chat/completions"));
    expect(request?.headers["x-trace-id"]).toBeTruthy();
    expect(request?.headers.traceparent).toBeUndefined();
  });
});
