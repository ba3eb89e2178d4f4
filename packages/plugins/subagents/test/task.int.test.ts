import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type AntlerPlugin,
  type CodePlugin,
  definePlugin,
  emitCustomEvent,
  type KernelConfigInput,
  type RunInfo,
  type RunOutcome,
} from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { type Script, scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient, type CustomEvent, type SerializedMessage, type StreamEvent } from "@antler/plugin-runtime";
import sandboxPlugin from "@antler/plugin-sandbox";
import localPlugin from "@antler/sandbox-local";
import type { BaseMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import subagentsPlugin, { type AcceptanceReport, type ToolReceipt } from "../src/index.js";

const WS = "/mnt/user-data/workspace";
const cleanups: Array<() => Promise<void> | void> = [];
/** Ends the waits of `stall` middlewares once a test is over, so none outlives it. */
const stalls: AbortController[] = [];
afterEach(async () => {
  for (const stall of stalls.splice(0)) stall.abort();
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** Polls `probe` until it holds; fails after `ms` (generous: a slow machine only costs time here). */
async function until(probe: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!probe()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Records every run's start and end, subagent runs included. */
function runRecorder() {
  const started: RunInfo[] = [];
  const ended: Array<{ run: RunInfo; outcome: RunOutcome; at: number }> = [];
  const plugin = definePlugin({
    name: "test-run-recorder",
    version: "0.1.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.hooks.runStart.tap((run) => void started.push(run));
      ctx.hooks.runEnd.tap((run, outcome) => void ended.push({ run, outcome, at: performance.now() }));
    },
  });
  return { plugin, started, ended };
}

/**
 * A `stall` tool whose middleware waits while ignoring cancellation (LangChain already cuts a plain tool short on
 * abort, a middleware it does not): only the safety net can get a task past it.
 */
function stallPlugin(ms: number): AntlerPlugin {
  // The wait ignores the run's cancellation; only the end of the test cuts it short.
  const stall = new AbortController();
  stalls.push(stall);
  return definePlugin({
    name: "test-stall",
    version: "0.1.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.tools.add(defineTool({ name: "stall", description: "Waits.", schema: z.object({}), run: () => "stalled" }));
      ctx.middleware.add({
        name: "stall",
        async wrapToolCall(request, handler) {
          if (request.toolCall.name === "stall") await sleep(ms, undefined, { signal: stall.signal }).catch(() => undefined);
          return handler(request);
        },
      });
    },
  });
}

interface Setup {
  lead: Script;
  sub: Script;
  config?: Partial<KernelConfigInput>;
  pluginConfig?: Record<string, unknown>;
  plugins?: CodePlugin[];
}

async function start(setup: Setup) {
  const cwd = mkdtempSync(join(tmpdir(), "antler-subagents-test-"));
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  const scripted = scriptedModelsPlugin({ lead: setup.lead, sub: setup.sub });
  const runs = runRecorder();
  const client = await AntlerClient.create({
    config: {
      models: [
        { name: "lead", provider: "scripted" },
        { name: "sub", provider: "scripted" },
      ],
      default_model: "lead",
      storage: { backend: "memory" },
      title: { enabled: false },
      logging: { level: "warn" },
      sandbox: { allow_host_bash: true },
      subagents: { enabled: true },
      ...setup.config,
    },
    plugins: [
      scripted,
      localPlugin,
      sandboxPlugin,
      runs.plugin,
      ...(setup.plugins ?? []),
      {
        plugin: subagentsPlugin,
        config: { agents: { "general-purpose": { model: "sub" }, bash: { model: "sub" } }, ...setup.pluginConfig },
      },
    ],
    cwd,
    env: { PATH: process.env.PATH },
    discover: false,
  });
  cleanups.push(() => client.close());
  const baseDir = client.kernel.paths.baseDir;
  return {
    client,
    runs,
    lead: () => scripted.models.get("lead"),
    sub: () => scripted.models.get("sub"),
    hostFile: (thread: string, rel: string) => join(baseDir, "users", "default", "threads", thread, "user-data", "workspace", rel),
  };
}

async function collect(stream: AsyncGenerator<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

function customEvents(events: StreamEvent[], type?: string): Array<Record<string, unknown>> {
  return events
    .filter((e): e is CustomEvent => e.type === "custom")
    .map((e) => e.data)
    .filter((d) => type === undefined || d.type === type);
}

function toolResults(events: StreamEvent[]): Map<string, SerializedMessage> {
  const last = [...events].reverse().find((e) => e.type === "values");
  const messages = last?.type === "values" ? last.data.messages : [];
  return new Map(messages.filter((m) => m.type === "tool").map((m) => [m.tool_call_id as string, m]));
}

function text(message: BaseMessage | undefined): string {
  return typeof message?.content === "string" ? message.content : JSON.stringify(message?.content);
}

const SUM = "export const sum = (a, b) => a + b;\n";
const SUM_TEST = `import { test } from "node:test";
import assert from "node:assert/strict";
import { sum } from "./sum.mjs";
test("adds", () => assert.equal(sum(2, 3), 5));
test("adds negatives", () => assert.equal(sum(-2, -3), -5));
`;
const TEST_COMMAND = "node --test sum.test.mjs";

describe("task end to end through AntlerClient, a scripted lead and a scripted subagent in the local sandbox", () => {
  it("runs the subagent, records receipts, and checks file:, file_written:, tests_passed: and free-text criteria", async () => {
    const criteria = [
      `file:${WS}/sum.mjs exists`,
      "file:sum.test.mjs non-empty",
      "file_written:sum.mjs",
      `tests_passed:${TEST_COMMAND}`,
      "The code is idiomatic and well documented",
      `file:${WS}/CHANGELOG.md exists`,
    ];
    const t = await start({
      lead: [
        {
          toolCalls: [
            {
              id: "task-1",
              name: "task",
              args: {
                description: "write sum with tests",
                prompt: "Write sum.mjs and a node:test file, then run the tests.",
                subagent_type: "general-purpose",
                acceptance_criteria: criteria,
              },
            },
          ],
        },
        { text: "The subagent wrote sum.mjs; its tests pass." },
      ],
      sub: [
        {
          toolCalls: [
            { name: "write_file", args: { description: "module", path: `${WS}/sum.mjs`, content: SUM } },
            { name: "write_file", args: { description: "tests", path: `${WS}/sum.test.mjs`, content: SUM_TEST } },
          ],
          usage: { input_tokens: 100, output_tokens: 20 },
        },
        {
          toolCalls: [{ name: "bash", args: { description: "run tests", command: `cd ${WS} && ${TEST_COMMAND}` } }],
          usage: { input_tokens: 150, output_tokens: 10 },
        },
        {
          text: "Wrote sum.mjs [r1 write_file] and sum.test.mjs [r2 write_file]; 2 tests pass [r3 bash].",
          usage: { input_tokens: 200, output_tokens: 30 },
        },
      ],
    });
    const events = await collect(t.client.stream("add a sum module", { threadId: "t1" }));
    const end = events.find((e) => e.type === "end");
    expect(end?.type === "end" && end.data.trace_id).toBeTruthy();
    const traceId = end?.type === "end" ? end.data.trace_id : "";

    // The subagent really wrote files and ran the tests in the parent's sandbox.
    expect(readFileSync(t.hostFile("t1", "sum.mjs"), "utf8")).toBe(SUM);
    expect(existsSync(t.hostFile("t1", "sum.test.mjs"))).toBe(true);

    const result = toolResults(events).get("task-1");
    expect(result?.status).toBe("success");
    const kwargs = result?.additional_kwargs as Record<string, unknown>;
    expect(kwargs).toMatchObject({
      subagent_status: "completed",
      subagent_model_name: "sub",
      subagent_type: "general-purpose",
      subagent_task_id: "task-1",
      subagent_trace_id: traceId,
      subagent_token_usage: { input_tokens: 450, output_tokens: 60, total_tokens: 510 },
    });
    expect(kwargs.subagent_stop_reason).toBeUndefined();
    expect(kwargs.subagent_result_brief).toContain("2 tests pass [r3 bash]");
    expect(kwargs.subagent_result_sha256).toMatch(/^[0-9a-f]{64}$/);

    const receipts = kwargs.subagent_receipts as ToolReceipt[];
    expect(receipts.map((r) => `${r.id} ${r.tool} ${r.status}`)).toEqual([
      "r1 write_file success",
      "r2 write_file success",
      "r3 bash success",
    ]);
    expect(receipts[0]).toMatchObject({ path: `${WS}/sum.mjs`, argsSha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(receipts[2]).toMatchObject({ command: `cd ${WS} && ${TEST_COMMAND}`, exitCode: 0 });
    expect(receipts[2]?.outputTail).toMatch(/pass 2/);

    const acceptance = kwargs.subagent_acceptance_verdict as AcceptanceReport;
    expect(acceptance.criteria.map((c) => c.verdict)).toEqual(["MET", "MET", "MET", "MET", "UNVERIFIED", "UNMET"]);
    expect(acceptance.verdict).toBe("UNMET");
    expect(acceptance.criteria[3]?.evidence).toContain("r3");
    expect(result?.content).toMatch(/^Task Succeeded\. Result: /);
    expect(result?.content).toContain("Acceptance: UNMET");
    expect(result?.content).toContain("[r3 bash] success exit=0");

    // The subagent's own messages stay out of the parent's stream: only its result reaches the lead.
    const leaked = events.filter((e) => e.type === "messages-tuple" && e.data.type === "ai" && e.data.content.includes("[r3 bash]"));
    expect(leaked).toEqual([]);
    const toolTuples = events.flatMap((e) => (e.type === "messages-tuple" && e.data.type === "tool" ? [e.data.tool_call_id] : []));
    expect(toolTuples).toEqual(["task-1"]);

    // Events: started, running per subagent message, completed with the verdict; all carry the trace id.
    const types = customEvents(events).map((e) => e.type);
    expect(types[0]).toBe("task_started");
    expect(types.filter((x) => x === "task_running")).toHaveLength(3);
    expect(types.at(-1)).toBe("task_completed");
    const completed = customEvents(events, "task_completed")[0];
    expect(completed).toMatchObject({
      task_id: "task-1",
      description: "write sum with tests",
      acceptance_verdict: "UNMET",
      trace_id: traceId,
    });
    expect(customEvents(events).every((e) => e.trace_id === traceId)).toBe(true);

    // Criteria reach the subagent in its task message as data; its system prompt never contains them.
    const firstCall = t.sub()?.calls[0]?.messages ?? [];
    const system = firstCall.find((m) => m.getType() === "system");
    const human = firstCall.find((m) => m.getType() === "human");
    expect(text(system)).not.toContain("CHANGELOG");
    expect(text(human)).toContain("<acceptance_criteria>");
    expect(text(human)).toContain(JSON.stringify(`file:${WS}/CHANGELOG.md exists`));
    // The subagent reads its receipt labels, so it can cite them.
    const secondCall = t.sub()?.calls[1]?.messages ?? [];
    expect(secondCall.filter((m) => m.getType() === "tool").map((m) => text(m).slice(0, 16))).toEqual([
      "[r1 write_file] ",
      "[r2 write_file] ",
    ]);
    // Its tools: everything but task, ask_clarification and present_files.
    expect(t.sub()?.calls[0]?.tools).toEqual(expect.arrayContaining(["bash", "read_file", "write_file"]));
    expect(t.sub()?.calls[0]?.tools).not.toContain("task");
    expect(t.sub()?.calls[0]?.tools).not.toContain("present_files");

    // The subagent had its own kernel run under the parent's trace id and thread.
    expect(t.runs.started).toHaveLength(2);
    expect(new Set(t.runs.started.map((r) => r.traceId))).toEqual(new Set([traceId]));
    expect(t.runs.started.every((r) => r.threadId === "t1")).toBe(true);
  });

  it("reports tests_passed UNMET when the recorded test run fails", async () => {
    const t = await start({
      lead: [
        {
          toolCalls: [
            {
              id: "task-1",
              name: "task",
              args: { prompt: "add tests", subagent_type: "bash", acceptance_criteria: [`tests_passed:${TEST_COMMAND}`] },
            },
          ],
        },
        { text: "done" },
      ],
      sub: [
        {
          toolCalls: [
            {
              name: "write_file",
              args: { description: "module", path: `${WS}/sum.mjs`, content: "export const sum = (a, b) => a - b;\n" },
            },
            { name: "write_file", args: { description: "tests", path: `${WS}/sum.test.mjs`, content: SUM_TEST } },
          ],
        },
        { toolCalls: [{ name: "bash", args: { description: "run tests", command: `cd ${WS} && ${TEST_COMMAND}` } }] },
        { text: "All tests pass." },
      ],
    });
    const events = await collect(t.client.stream("go", { threadId: "t2" }));
    const kwargs = toolResults(events).get("task-1")?.additional_kwargs as Record<string, unknown>;
    const receipts = kwargs.subagent_receipts as ToolReceipt[];
    expect(receipts[2]?.exitCode).not.toBe(0);
    const acceptance = kwargs.subagent_acceptance_verdict as AcceptanceReport;
    expect(acceptance.verdict).toBe("UNMET");
    expect(acceptance.criteria[0]?.evidence).toMatch(/r3: .* exit code [1-9]/);
    // The display falls back to the prompt when the model gave no description.
    expect(customEvents(events, "task_started")[0]?.description).toBe("add tests");
  });

  it("checks file: criteria in the shared sandbox when the parent acquired it first", async () => {
    const t = await start({
      lead: [
        { toolCalls: [{ id: "w", name: "write_file", args: { description: "brief", path: `${WS}/brief.md`, content: "make notes" } }] },
        {
          toolCalls: [
            {
              id: "task-1",
              name: "task",
              args: {
                prompt: "write notes",
                subagent_type: "general-purpose",
                acceptance_criteria: ["file:notes.md non-empty", "file:brief.md exists"],
              },
            },
          ],
        },
        { text: "done" },
      ],
      sub: [
        { toolCalls: [{ name: "write_file", args: { description: "notes", path: `${WS}/notes.md`, content: "notes\n" } }] },
        { text: "Wrote notes.md [r1 write_file]." },
      ],
    });
    const events = await collect(t.client.stream("go", { threadId: "t8" }));
    const acceptance = toolResults(events).get("task-1")?.additional_kwargs?.subagent_acceptance_verdict as AcceptanceReport;
    expect(acceptance.criteria.map((c) => `${c.verdict} ${c.criterion}`)).toEqual([
      "MET file:notes.md non-empty",
      "MET file:brief.md exists",
    ]);
  });

  it("checks the report's [rN] citations against the receipts and gives the lead a citation verdict", async () => {
    const t = await start({
      lead: [
        { toolCalls: [{ id: "cite-1", name: "task", args: { prompt: "list the workspace", subagent_type: "bash" } }] },
        { text: "ok" },
      ],
      sub: [
        { toolCalls: [{ name: "bash", args: { description: "list", command: "echo listed" } }] },
        // One true citation, one invented receipt, one real receipt cited as another tool.
        { text: "Listed the workspace [r1 bash], wrote notes.md [r2 write_file] and read it back [r1 read_file]." },
      ],
    });
    const events = await collect(t.client.stream("go", { threadId: "t-cite" }));
    const result = toolResults(events).get("cite-1");
    const content = String(result?.content);
    expect(content).toContain("Citations: INCONSISTENT (3 checked, 2 invalid, 0 receipts uncited)");
    expect(content).toContain("- [r2 write_file]: no such receipt");
    expect(content).toContain("- [r1 read_file]: receipt is of another tool (r1 is bash)");
    expect(((result?.additional_kwargs ?? {}) as Record<string, unknown>).subagent_citations).toMatchObject({
      verdict: "INCONSISTENT",
      invalid: 2,
    });
    expect(customEvents(events, "task_completed")[0]).toMatchObject({ citations_verdict: "INCONSISTENT" });
  });

  it("records what the subagent's middleware emits on the parent run's stream, tagged with the task", async () => {
    const auditPlugin = definePlugin({
      name: "test-audit-events",
      version: "0.1.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.middleware.add({
          name: "audit",
          async wrapToolCall(request, handler) {
            await emitCustomEvent({ type: "test_audit", tool: request.toolCall.name });
            return handler(request);
          },
        });
      },
    });
    const t = await start({
      lead: [{ toolCalls: [{ id: "audit-1", name: "task", args: { prompt: "say hi", subagent_type: "bash" } }] }, { text: "ok" }],
      sub: [{ toolCalls: [{ name: "bash", args: { description: "hi", command: "echo hi" } }] }, { text: "Said hi [r1 bash]." }],
      plugins: [auditPlugin],
    });
    const events = await collect(t.client.stream("go", { threadId: "t-audit" }));
    const audits = customEvents(events, "test_audit");
    // The lead's own task call, then the subagent's bash call, in that order.
    expect(audits).toEqual([
      { type: "test_audit", tool: "task" },
      { type: "test_audit", tool: "bash", subagent: { task_id: "audit-1", subagent_type: "bash" } },
    ]);
    const types = customEvents(events).map((e) => e.type);
    expect(types.indexOf("test_audit", types.indexOf("task_started"))).toBeLessThan(types.indexOf("task_completed"));
  });

  it("binds `task` to the lead only when subagents.enabled is true, and never to a subagent", async () => {
    const bound: Record<string, string[] | undefined> = {};
    for (const enabled of [true, false]) {
      const t = await start({ lead: [{ text: "hello" }], sub: [], config: { subagents: { enabled } } });
      await collect(t.client.stream("hi", { threadId: `bind-${enabled}` }));
      bound[String(enabled)] = t.lead()?.calls[0]?.tools;
    }
    // Both leads got the sandbox tools, so the difference is the flag, not an empty tool set.
    expect(bound.true).toEqual(expect.arrayContaining(["bash", "write_file", "task"]));
    expect(bound.false).toEqual(expect.arrayContaining(["bash", "write_file"]));
    expect(bound.false).not.toContain("task");

    const t = await start({
      lead: [
        { toolCalls: [{ id: "d", name: "task", args: { description: "d", prompt: "p", subagent_type: "general-purpose" } }] },
        { text: "ok" },
      ],
      sub: [{ text: "done" }],
    });
    await collect(t.client.stream("delegate", { threadId: "bind-sub" }));
    expect(t.sub()?.calls[0]?.tools).toEqual(expect.arrayContaining(["bash", "write_file"]));
    expect(t.sub()?.calls[0]?.tools).not.toContain("task");
  });

  it("answers an unknown subagent type with the list of available types, without running anything", async () => {
    const t = await start({
      lead: [{ toolCalls: [{ id: "x", name: "task", args: { prompt: "p", subagent_type: "researcher" } }] }, { text: "ok" }],
      sub: [],
      config: {
        subagents: { enabled: true, custom_agents: { reviewer: { description: "Reviews code.", system_prompt: "You review code." } } },
      },
    });
    const events = await collect(t.client.stream("go", { threadId: "t3" }));
    const result = toolResults(events).get("x");
    expect(result?.status).toBe("error");
    expect(result?.content).toContain('unknown subagent_type "researcher"');
    expect(result?.content).toContain("Available types: general-purpose, bash, reviewer");
    expect(t.sub()?.callCount ?? 0).toBe(0);
    expect(t.runs.started).toHaveLength(1);
  });

  it("cancels the running subagent cooperatively when the parent run is cancelled", async () => {
    const t = await start({
      lead: [
        { toolCalls: [{ id: "slow", name: "task", args: { prompt: "think long", subagent_type: "general-purpose" } }] },
        { text: "never" },
      ],
      sub: [{ text: "too late", delayMs: 20_000 }],
    });
    const controller = new AbortController();
    let abortedAt = 0;
    const consume = (async () => {
      for await (const event of t.client.stream("go", { threadId: "t4", signal: controller.signal })) {
        if (event.type === "custom" && event.data.type === "task_running") throw new Error("the subagent should not get to answer");
        if (event.type === "custom" && event.data.type === "task_started") {
          // Stop once the subagent is inside its 20 s model call.
          await until(() => (t.sub()?.callCount ?? 0) > 0, "the subagent's model call");
          abortedAt = performance.now();
          controller.abort("user pressed stop");
        }
      }
    })();
    await expect(consume).rejects.toThrow(/cancel/i);
    // Wait for the subagent's run to end (it is cancelled through its own signal, not abandoned).
    await until(() => t.runs.ended.length >= 2, "the subagent's run to end");
    const subRun = t.runs.ended.find((e) => e.run.runId !== t.runs.started[0]?.runId);
    expect(subRun?.outcome).toBe("cancelled");
    // Well before its 20 s model call would have ended, with room for a loaded machine.
    expect((subRun?.at ?? Number.POSITIVE_INFINITY) - abortedAt).toBeLessThan(10_000);
  });

  it("times out a subagent stuck in a tool, stops it, and carries the receipts so far into task_timed_out", async () => {
    const t = await start({
      lead: [{ toolCalls: [{ id: "stuck", name: "task", args: { prompt: "do it", subagent_type: "general-purpose" } }] }, { text: "ok" }],
      sub: [
        { toolCalls: [{ name: "write_file", args: { description: "note", path: `${WS}/note.txt`, content: "started\n" } }] },
        { toolCalls: [{ name: "stall", args: {} }] },
        { text: "finished late" },
      ],
      plugins: [stallPlugin(60_000)],
      // Long enough for the write_file step to finish on a loaded machine before the timeout; the stall outlasts it.
      pluginConfig: { agents: { "general-purpose": { model: "sub", timeout_seconds: 3 } }, cancel_grace_seconds: 0.3 },
    });
    const before = performance.now();
    const events = await collect(t.client.stream("go", { threadId: "t5" }));
    // Back long before the 60 s stall ends, with room for a loaded machine.
    expect(performance.now() - before).toBeLessThan(30_000);
    const timedOut = customEvents(events, "task_timed_out")[0];
    expect(timedOut).toMatchObject({ task_id: "stuck", status: "timed_out" });
    expect(((timedOut?.receipts ?? []) as ToolReceipt[]).map((r) => `${r.id} ${r.tool}`)).toEqual(["r1 write_file"]);
    const result = toolResults(events).get("stuck");
    expect(result?.status).toBe("error");
    expect(result?.content).toMatch(/^Task timed out/);
    expect(result?.additional_kwargs).toMatchObject({ subagent_status: "timed_out", subagent_error: "timed out after 3s" });
  });

  it("returns a timed-out task after the grace period even when the subagent never gets going (safety net)", async () => {
    const hung = definePlugin({
      name: "test-hung-model",
      version: "0.1.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.models.addProvider({ id: "hung", create: () => new Promise<never>(() => {}) });
      },
    });
    const t = await start({
      lead: [{ toolCalls: [{ id: "h", name: "task", args: { prompt: "p", subagent_type: "waiter" } }] }, { text: "ok" }],
      sub: [],
      config: {
        models: [
          { name: "lead", provider: "scripted" },
          { name: "sub", provider: "scripted" },
          { name: "never", provider: "hung" },
        ],
        subagents: {
          enabled: true,
          custom_agents: { waiter: { description: "Waits.", system_prompt: "Wait.", model: "never", timeout_seconds: 0.3 } },
        },
      },
      plugins: [hung],
      pluginConfig: { cancel_grace_seconds: 0.2 },
    });
    const before = performance.now();
    const events = await collect(t.client.stream("go", { threadId: "t7" }));
    // The model never answers: returning at all is the safety net; the bound leaves room for a loaded machine.
    expect(performance.now() - before).toBeLessThan(20_000);
    expect(customEvents(events, "task_timed_out")[0]).toMatchObject({ task_id: "h", receipts: [] });
    expect(toolResults(events).get("h")?.additional_kwargs).toMatchObject({
      subagent_status: "timed_out",
      subagent_error: "timed out after 0.3s and did not stop within the grace period",
    });
  });

  it("runs parallel task calls concurrently, but never more at once than runtime.max_running", async () => {
    // `target` is how many calls may overlap; each call holds its slot at least 400 ms, and until that many are in
    // at once (at most 20 s), so a slow start of one subagent cannot hide the overlap.
    const peak = { now: 0, max: 0, target: 1 };
    const probe = definePlugin({
      name: "test-busy",
      version: "0.1.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.tools.add(
          defineTool({
            name: "busy",
            description: "Works for a while.",
            schema: z.object({}),
            async run() {
              peak.now++;
              peak.max = Math.max(peak.max, peak.now);
              const held = performance.now();
              while ((performance.now() - held < 400 || peak.max < peak.target) && performance.now() - held < 20_000) await sleep(20);
              peak.now--;
              return "worked";
            },
          }),
        );
      },
    });
    const task = (id: string) => ({ id, name: "task", args: { prompt: `job ${id}`, subagent_type: "general-purpose" } });
    const sub: Script = {
      respond: (messages) => (messages.some((m) => m.getType() === "tool") ? { text: "ok" } : { toolCalls: [{ name: "busy", args: {} }] }),
    };
    for (const [maxRunning, expected] of [
      [1, 1],
      [3, 3],
    ] as const) {
      peak.max = 0;
      peak.target = expected;
      const t = await start({
        lead: [{ toolCalls: [task("a"), task("b"), task("c")] }, { text: "done" }],
        sub,
        plugins: [probe],
        pluginConfig: { agents: { "general-purpose": { model: "sub" } }, runtime: { max_running: maxRunning } },
      });
      const events = await collect(t.client.stream("go", { threadId: `p${maxRunning}` }));
      expect([...toolResults(events).values()].filter((m) => m.additional_kwargs?.subagent_status === "completed")).toHaveLength(3);
      expect(peak.max).toBe(expected);
    }
  });

  it("caps task calls per response and per run with SubagentLimit", async () => {
    const task = (id: string) => ({ id, name: "task", args: { prompt: `job ${id}`, subagent_type: "general-purpose" } });
    const t = await start({
      lead: [{ toolCalls: [task("a"), task("b"), task("c")] }, { toolCalls: [task("d"), task("e")] }, { text: "done" }],
      sub: { respond: () => ({ text: "ok" }) },
      config: { subagents: { enabled: true, max_concurrent: 2, max_total_per_run: 3 } },
    });
    const events = await collect(t.client.stream("go", { threadId: "t6" }));
    const results = toolResults(events);
    const status = (id: string) => results.get(id)?.additional_kwargs?.subagent_status ?? results.get(id)?.content.slice(0, 40);
    expect(status("a")).toBe("completed");
    expect(status("b")).toBe("completed");
    expect(results.get("c")?.content).toContain("at most 2 task calls may start from one response");
    expect(status("d")).toBe("completed");
    expect(results.get("e")?.content).toContain("already started 3 task(s)");
    expect(t.sub()?.callCount).toBe(3);
  });
});
