import { BATCH_QUEUE_CHANNEL } from "@antler/plugin-batch";
import { GATEWAY_SSE_CHANNEL } from "@antler/plugin-gateway";
import { RUN_QUEUE_CHANNEL } from "@antler/plugin-runtime";
import { SCHEDULER_FIRING_CHANNEL } from "@antler/plugin-scheduler";
import parsePrometheusTextFormat, { type ParsedFamily } from "parse-prometheus-text-format";
import { describe, expect, it } from "vitest";
import { ALICE_KEY, readSse, startTestGateway, type TestGateway } from "../../gateway/test/fixtures.js";
import metricsPlugin, { type MetricsConfigInput, metricsConfigSchema, OBSERVED_CHANNELS, OTHER_TOOL_LABEL } from "../src/index.js";

async function scrape(gateway: TestGateway, headers: Record<string, string> = { authorization: `Bearer ${ALICE_KEY}` }) {
  const res = await fetch(`${gateway.url}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  // The parser throws on any line that is not valid exposition format.
  return parsePrometheusTextFormat(await res.text());
}

/** Each sample line's metric name and labels, without its value. */
function seriesOf(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => line.slice(0, line.lastIndexOf(" ")));
}

function family(families: ParsedFamily[], name: string): ParsedFamily {
  const found = families.find((f) => f.name === name);
  if (!found) throw new Error(`no metric family ${name}; have ${families.map((f) => f.name).join(", ")}`);
  return found;
}

/** The value of the sample of `name` whose labels include `labels` (0 when absent). */
function value(families: ParsedFamily[], name: string, labels: Record<string, string> = {}): number {
  const sample = family(families, name).metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample?.value === undefined ? 0 : Number(sample.value);
}

/**
 * Observations of a histogram, from its `+Inf` bucket. (This parser folds a histogram's label sets into one, so the
 * tests observe one label set per histogram and check the labels in the text itself.)
 */
function observations(families: ParsedFamily[], name: string): number {
  const sample = family(families, name).metrics[0];
  return Number(sample?.buckets?.["+Inf"] ?? 0);
}

async function gatewayWithMetrics(config: MetricsConfigInput = {}) {
  return startTestGateway({
    plugins: [{ plugin: metricsPlugin, config }],
    script: [
      { toolCalls: [{ name: "write_report", args: { name: "r.md", text: "# R" } }], usage: { input_tokens: 10, output_tokens: 4 } },
      { text: "Report written.", usage: { input_tokens: 20, output_tokens: 6 } },
      { text: "Streamed.", delayMs: 1000, usage: { input_tokens: 5, output_tokens: 2 } },
    ],
  });
}

describe("Prometheus /metrics on the gateway", () => {
  it("counts runs, model calls, tokens, tool calls and open SSE streams as runs happen", async () => {
    const gw = await gatewayWithMetrics();
    const before = await scrape(gw);
    expect(value(before, "antler_runs_total", { outcome: "success" })).toBe(0);
    expect(family(before, "antler_run_duration_seconds").type).toBe("HISTOGRAM");
    expect(value(before, "antler_sse_streams_active")).toBe(0);

    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-metrics" } });
    const wait = await gw.call("/api/threads/t-metrics/runs/wait", { method: "POST", json: { message: "write it" } });
    expect(wait.status).toBe(200);

    const afterWait = await scrape(gw);
    expect(value(afterWait, "antler_runs_total", { outcome: "success" })).toBe(1);
    expect(value(afterWait, "antler_runs_total", { outcome: "error" })).toBe(0);
    expect(observations(afterWait, "antler_run_duration_seconds")).toBe(1);
    expect(observations(afterWait, "antler_model_call_duration_seconds")).toBe(2);
    expect(value(afterWait, "antler_tokens_total", { model: "m", direction: "input" })).toBe(30);
    expect(value(afterWait, "antler_tokens_total", { model: "m", direction: "output" })).toBe(10);
    expect(value(afterWait, "antler_tool_calls_total", { tool: "write_report", outcome: "success" })).toBe(1);

    // A streamed run: the gauge is 1 while its SSE body is open, and back to 0 once it ends.
    const stream = await gw.call("/api/threads/t-metrics/runs/stream", { method: "POST", json: { message: "stream it" } });
    expect(stream.status).toBe(200);
    const frames = readSse(stream);
    expect((await frames.next()).value?.event).toBe("metadata");
    expect(value(await scrape(gw), "antler_sse_streams_active")).toBe(1);
    for await (const _ of frames) {
      // drain to the end
    }
    const afterStream = await scrape(gw);
    expect(value(afterStream, "antler_sse_streams_active")).toBe(0);
    expect(value(afterStream, "antler_runs_total", { outcome: "success" })).toBe(2);
    expect(observations(afterStream, "antler_model_call_duration_seconds")).toBe(3);
    expect(value(afterStream, "antler_tokens_total", { model: "m", direction: "input" })).toBe(35);
    // The one label set the histograms observed, in the text itself.
    const text = await (await gw.call("/metrics")).text();
    expect(text).toContain('antler_model_call_duration_seconds_count{model="m",outcome="success"} 3');
    expect(text).toContain('antler_run_duration_seconds_count{outcome="success"} 2');
  });

  it("counts what priced model calls cost as antler_cost_total{model}, in USD", async () => {
    const gw = await startTestGateway({
      plugins: [{ plugin: metricsPlugin, config: {} }],
      // $1,000 per million input tokens, $2,000 per million output tokens.
      kernelConfig: { models: [{ name: "m", provider: "scripted", pricing: { input: 1000, output: 2000 } }] },
      script: [
        { toolCalls: [{ name: "write_report", args: { name: "r.md", text: "# R" } }], usage: { input_tokens: 10, output_tokens: 4 } },
        { text: "Report written.", usage: { input_tokens: 20, output_tokens: 6 } },
      ],
    });
    expect(value(await scrape(gw), "antler_cost_total", { model: "m" })).toBe(0);
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-cost" } });
    const wait = await gw.call("/api/threads/t-cost/runs/wait", { method: "POST", json: { message: "write it" } });
    expect(wait.status).toBe(200);
    // (10 × 1000 + 4 × 2000 + 20 × 1000 + 6 × 2000) / 1,000,000
    expect(value(await scrape(gw), "antler_cost_total", { model: "m" })).toBeCloseTo(0.05, 10);
  });

  it('counts calls to tools the agent does not have as tool="other": a 20,000-character made-up name adds nothing to the scrape', async () => {
    const long = `x${"y".repeat(19_999)}`;
    const gw = await startTestGateway({
      plugins: [{ plugin: metricsPlugin, config: {} }],
      script: [
        { toolCalls: [{ name: "write_report", args: { name: "r.md", text: "# R" } }] },
        { toolCalls: [{ name: "made_up_tool", args: {} }] },
        { text: "First run done." },
        { toolCalls: [{ name: long, args: {} }] },
        { text: "Second run done." },
      ],
    });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-made-up" } });
    const run = (message: string) => gw.call("/api/threads/t-made-up/runs/wait", { method: "POST", json: { message } });
    expect((await run("first")).status).toBe(200);
    const before = await (await gw.call("/metrics")).text();
    expect(before).toContain('antler_tool_calls_total{tool="write_report",outcome="success"} 1');
    expect(before).toContain(`antler_tool_calls_total{tool="${OTHER_TOOL_LABEL}",outcome="error"} 1`);
    expect(before).not.toContain("made_up_tool");

    expect((await run("second")).status).toBe(200);
    const after = await (await gw.call("/metrics")).text();
    expect(after).toContain(`antler_tool_calls_total{tool="${OTHER_TOOL_LABEL}",outcome="error"} 2`);
    expect(after).not.toContain("yyyy");
    // The same series as before (only values moved), so the scrape is as long as before, give or take a few digits.
    expect(seriesOf(after)).toEqual(seriesOf(before));
    expect(after.length - before.length).toBeLessThan(200);
  });

  it("counts batch claims, lease takeovers, queue depth and scheduler firings from their channels", async () => {
    const gw = await gatewayWithMetrics();
    const { channel } = await import("node:diagnostics_channel");
    channel(OBSERVED_CHANNELS.batchQueue).publish({ worker_id: "w1", claimed: 3, taken_over: 1 });
    channel(OBSERVED_CHANNELS.batchQueue).publish({ worker_id: "w1", claimed: 0, taken_over: 0, queue_depth: 7 });
    channel(OBSERVED_CHANNELS.schedulerFiring).publish({ task_id: "t", trigger: "schedule", result: "fired" });
    channel(OBSERVED_CHANNELS.schedulerFiring).publish({ task_id: "t", trigger: "schedule", result: "skipped" });
    const m = await scrape(gw);
    expect(value(m, "antler_batch_items_claimed_total")).toBe(3);
    expect(value(m, "antler_batch_lease_takeovers_total")).toBe(1);
    expect(value(m, "antler_batch_queue_depth")).toBe(7);
    expect(value(m, "antler_scheduler_firings_total", { trigger: "schedule", result: "fired" })).toBe(1);
    expect(value(m, "antler_scheduler_firings_total", { trigger: "schedule", result: "skipped" })).toBe(1);
  });

  it("counts run takeovers and how long runs waited to start, by how they came (new, takeover), and the queued runs", async () => {
    const gw = await gatewayWithMetrics();
    const { channel } = await import("node:diagnostics_channel");
    channel(OBSERVED_CHANNELS.runQueue).publish({ type: "taken_over", run_id: "r1", attempt: 2 });
    channel(OBSERVED_CHANNELS.runQueue).publish({ type: "started", via: "takeover", wait_ms: 2500 });
    // This parser folds a histogram's label sets, so the histogram is read from the text.
    const before = await (await gw.call("/metrics")).text();
    expect(before).toMatch(/^antler_run_takeovers_total 1$/m);
    expect(before).toMatch(/^antler_run_queue_wait_seconds_count\{via="takeover"\} 1$/m);
    expect(before).toMatch(/^antler_run_queue_wait_seconds_sum\{via="takeover"\} 2\.5$/m);
    expect(before).toMatch(/^antler_runs_pending 0$/m);
    // A real run publishes its own wait (accepted to started, via new).
    expect((await gw.call("/api/threads", { method: "POST", json: { thread_id: "t1" } })).status).toBe(201);
    expect((await gw.call("/api/threads/t1/runs/wait", { method: "POST", json: { message: "hi" } })).status).toBe(200);
    const after = await (await gw.call("/metrics")).text();
    expect(after).toMatch(/^antler_run_queue_wait_seconds_count\{via="new"\} 1$/m);
  });

  it("listens on the channels the gateway, batch, scheduler and runtime packages publish on", () => {
    expect(OBSERVED_CHANNELS).toEqual({
      sse: GATEWAY_SSE_CHANNEL,
      batchQueue: BATCH_QUEUE_CHANNEL,
      schedulerFiring: SCHEDULER_FIRING_CHANNEL,
      runQueue: RUN_QUEUE_CHANNEL,
    });
  });

  it("needs an API key by default: none is a 401, another user's key works", async () => {
    const gw = await gatewayWithMetrics();
    const anonymous = await fetch(`${gw.url}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await fetch(`${gw.url}/metrics`, { headers: { authorization: "Bearer wrong-key-0123456789" } })).status).toBe(401);
    expect((await gw.call("/metrics")).status).toBe(200);
    // Mounted at the root only: nothing at /api/metrics.
    expect((await gw.call("/api/metrics")).status).toBe(404);
  });

  it("with a bearer_token, only that token scrapes (an API key does not)", async () => {
    const token = "scrape-token-0123456789abcdef";
    const gw = await gatewayWithMetrics({ auth: { bearer_token: token } });
    expect((await fetch(`${gw.url}/metrics`)).status).toBe(401);
    expect((await gw.call("/metrics")).status).toBe(401);
    expect((await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${token}x` } })).status).toBe(401);
    expect(value(await scrape(gw, { authorization: `Bearer ${token}` }), "antler_runs_total", { outcome: "success" })).toBe(0);
    // The scrape token is no API key: it reaches nothing under /api.
    expect((await fetch(`${gw.url}/api/threads`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  });

  it("rejects bad config with the fix in the message", () => {
    const short = metricsConfigSchema.safeParse({ auth: { bearer_token: "short" } });
    expect(short.success).toBe(false);
    expect(short.error?.issues[0]?.message).toMatch(/at least 16 characters/);
    const api = metricsConfigSchema.safeParse({ path: "/api/metrics" });
    expect(api.error?.issues[0]?.message).toMatch(/under \/api/);
    const unknown = metricsConfigSchema.safeParse({ port: 9100 });
    expect(unknown.success).toBe(false);
  });
});
