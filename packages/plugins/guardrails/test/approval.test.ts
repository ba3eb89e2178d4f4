import { definePlugin, isAntlerError, type RunOutcome } from "@antler/kernel";
import { useTempDirs } from "@antler/kernel/testing";
import { type AntlerClient, INTERNAL_PRINCIPAL, RUN_PAUSED_EVENT, RUN_RESUMED_EVENT, RuntimeErrorCodes } from "@antler/plugin-runtime";
import { afterEach, describe, expect, it } from "vitest";
import { approvalClient, callThenReport, collect, customOf, type Ledger } from "./approval-fixtures.js";

const temp = useTempDirs();
const open: AntlerClient[] = [];
afterEach(async () => {
  for (const client of open.splice(0)) await client.close();
});

async function setup(
  script: Parameters<typeof callThenReport>[0],
  extra: {
    approval?: Record<string, unknown>;
    config?: Record<string, unknown>;
    plugins?: Parameters<typeof approvalClient>[0]["plugins"];
  } = {},
) {
  const ledger: Ledger = [];
  const built = await approvalClient({ dir: temp.tempDir("antler-approval-"), ledger, script: callThenReport(script), ...extra });
  open.push(built.client);
  return { ...built, ledger };
}

const pendingIds = (result: { interrupt?: Record<string, unknown> }) =>
  ((result.interrupt?.calls ?? []) as Array<{ tool_call_id: string }>).map((c) => c.tool_call_id);

const BASH = { name: "bash", args: { command: "rm -rf build" }, id: "call_bash" };

describe("approval pauses a run before a matched tool runs", () => {
  it("pauses with one interrupt naming the call, records status paused, and frees the run's slot", async () => {
    const { client, ledger } = await setup([BASH]);
    const events = await collect(client.stream("clean up", { threadId: "t1" }));
    expect(ledger).toEqual([]);
    const [paused] = customOf(events, RUN_PAUSED_EVENT);
    const end = events.at(-1);
    expect(end?.type).toBe("end");
    const endData = end?.data as { run_id: string; trace_id: string; stop_reason: string };
    expect(endData.stop_reason).toBe("paused");
    expect(paused).toMatchObject({
      run_id: endData.run_id,
      trace_id: endData.trace_id,
      interrupt: {
        kind: "approval",
        calls: [
          {
            tool_call_id: "call_bash",
            tool: "bash",
            args: { command: "rm -rf build" },
            rule: "shell",
            reason: "Shell commands change the machine",
          },
        ],
        on_timeout: { decisions: { call_bash: { decision: "reject" } } },
      },
    });
    const record = await client.getRun("t1", endData.run_id);
    expect(record.status).toBe("paused");
    expect(record.interrupt?.value).toMatchObject({ kind: "approval", calls: [{ tool_call_id: "call_bash" }] });
    expect(record.resume_by).toBe((paused?.interrupt as { expires_at?: string } | undefined)?.expires_at);
    expect(client.activeRuns).toBe(0);
    // The thread is held: a new run is refused, naming the paused run.
    const refused = await client.chat("something else", { threadId: "t1" }).catch((e: unknown) => e);
    expect(isAntlerError(refused, RuntimeErrorCodes.THREAD_BUSY)).toBe(true);
    expect((refused as Error).message).toContain(`run ${endData.run_id} is paused for approval`);
    // Nor may its state be written over or copied mid-turn.
    const written = await client.updateThreadState("t1", { values: { title: "x" } }).catch((e: unknown) => e);
    expect(isAntlerError(written, RuntimeErrorCodes.THREAD_BUSY)).toBe(true);
    const copied = await client.copyThread("t1").catch((e: unknown) => e);
    expect(isAntlerError(copied, RuntimeErrorCodes.THREAD_BUSY)).toBe(true);
  });

  it("a paused run holds no slot: with maxActiveRuns 1, another thread's run starts while it waits", async () => {
    const ledger: Ledger = [];
    const { client } = await approvalClient({
      dir: temp.tempDir("antler-approval-"),
      ledger,
      script: callThenReport([BASH]),
      maxActiveRuns: 1,
    });
    open.push(client);
    expect((await client.invoke("clean up", { threadId: "t1" })).status).toBe("paused");
    expect((await client.invoke("clean up too", { threadId: "t2" })).status).toBe("paused");
    expect(await client.countPausedRuns()).toBe(2);
  });

  it("approve: the same run continues from its checkpoint with its trace id, and the tool runs exactly once", async () => {
    const { client, ledger, calls } = await setup([BASH]);
    const first = await client.invoke("clean up", { threadId: "t1" });
    expect(first.status).toBe("paused");
    const events = await collect(client.resumeStream("t1", first.run_id, { decision: "approve" }));
    expect(customOf(events, RUN_RESUMED_EVENT)[0]).toMatchObject({ run_id: first.run_id, trace_id: first.trace_id, cause: "resume" });
    const end = events.at(-1)?.data as { run_id: string; trace_id: string; stop_reason: string | null };
    expect(end).toMatchObject({ run_id: first.run_id, trace_id: first.trace_id });
    expect(end.stop_reason).not.toBe("paused");
    expect(ledger).toEqual([{ tool: "bash", args: { command: "rm -rf build" } }]);
    // The model was called twice in all: once before the pause and once after the tool; never again for the resume.
    expect(calls()).toHaveLength(2);
    const record = await client.getRun("t1", first.run_id);
    expect(record.status).toBe("success");
    expect(record.interrupt).toBeNull();
    const thread = await client.getThread("t1");
    expect(thread.messages.at(-1)?.content).toContain('[call_bash] bash ran with {"command":"rm -rf build"}');
    // Resuming again is a conflict: the run is no longer paused.
    const again = await client.resume("t1", first.run_id, { decision: "approve" }).catch((e: unknown) => e);
    expect(isAntlerError(again, RuntimeErrorCodes.RUN_NOT_PAUSED)).toBe(true);
    expect(ledger).toHaveLength(1);
  });

  it("the kernel's runEnd hook hears the pause as outcome paused, and the resumed part's end as success, on the same run", async () => {
    const ended: Array<{ runId: string; outcome: RunOutcome }> = [];
    const recorder = definePlugin({
      name: "run-end-recorder",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.hooks.runEnd.tap((run, outcome) => {
          ended.push({ runId: run.runId, outcome });
        });
      },
    });
    const { client } = await setup([BASH], { plugins: [recorder] });
    const first = await client.invoke("clean up", { threadId: "t1" });
    expect(first.status).toBe("paused");
    expect(ended).toEqual([{ runId: first.run_id, outcome: "paused" }]);
    await client.resume("t1", first.run_id, { decision: "approve" });
    expect(ended).toEqual([
      { runId: first.run_id, outcome: "paused" },
      { runId: first.run_id, outcome: "success" },
    ]);
  });

  it("a paused and resumed run's record keeps the cost of both parts: the calls before the pause and after it", async () => {
    const ledger: Ledger = [];
    const usage = { input_tokens: 1000, output_tokens: 500 };
    const script = callThenReport([BASH]);
    const { client } = await approvalClient({
      dir: temp.tempDir("antler-approval-"),
      ledger,
      script: (messages, index) => ({ ...(script(messages, index) as object), usage }),
      config: { models: [{ name: "m", provider: "scripted", pricing: { input: 1, output: 2 } }] },
    });
    open.push(client);
    const first = await client.invoke("clean up", { threadId: "t1" });
    expect(first.status).toBe("paused");
    // One call before the pause: 1,000 input tokens at $1/M and 500 output tokens at $2/M.
    expect((await client.getRun("t1", first.run_id)).cost_usd).toBeCloseTo(0.002, 9);
    await client.resume("t1", first.run_id, { decision: "approve" });
    const record = await client.getRun("t1", first.run_id);
    expect(record.status).toBe("success");
    expect(record.cost_usd).toBeCloseTo(0.004, 9);
  });

  it("two resumes at once: exactly one continues the run, the other is RUN_NOT_PAUSED, and the tool runs once", async () => {
    const { client, ledger } = await setup([BASH]);
    const first = await client.invoke("clean up", { threadId: "t1" });
    const outcomes = await Promise.allSettled([
      client.resume("t1", first.run_id, { decision: "approve" }),
      client.resume("t1", first.run_id, { decision: "approve" }),
    ]);
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected")?.reason;
    expect(isAntlerError(refused, RuntimeErrorCodes.RUN_NOT_PAUSED)).toBe(true);
    expect(ledger).toEqual([{ tool: "bash", args: { command: "rm -rf build" } }]);
  });

  it("edit: the tool runs once with the edited arguments", async () => {
    const { client, ledger } = await setup([BASH]);
    const first = await client.invoke("clean up", { threadId: "t1" });
    const done = await client.resume("t1", first.run_id, { decision: "edit", args: { command: "ls build" } });
    expect(done.status).toBe("success");
    expect(ledger).toEqual([{ tool: "bash", args: { command: "ls build" } }]);
    expect(done.output).toContain('bash ran with {"command":"ls build"}');
  });

  it("edit with arguments the tool's schema refuses: RESUME_INVALID with the schema error, and the run stays paused", async () => {
    const { client, ledger } = await setup([BASH]);
    const first = await client.invoke("clean up", { threadId: "t1" });
    const refused = await client.resume("t1", first.run_id, { decision: "edit", args: { command: 42 } }).catch((e: unknown) => e);
    expect(isAntlerError(refused, RuntimeErrorCodes.RESUME_INVALID)).toBe(true);
    expect((refused as Error).message).toContain("the edited arguments for bash do not fit its schema: command:");
    expect((refused as Error).message).toMatch(/expected string/i);
    expect((await client.getRun("t1", first.run_id)).status).toBe("paused");
    expect(ledger).toEqual([]);
    // A decision of the wrong shape is refused the same way.
    const shapeless = await client.resume("t1", first.run_id, { decision: "maybe" }).catch((e: unknown) => e);
    expect(isAntlerError(shapeless, RuntimeErrorCodes.RESUME_INVALID)).toBe(true);
    // ... and a valid one still goes through afterwards.
    expect((await client.resume("t1", first.run_id, { decision: "approve" })).status).toBe("success");
    expect(ledger).toHaveLength(1);
  });

  it("reject: the tool never runs and the model reads the reason as the tool's result", async () => {
    const { client, ledger, calls } = await setup([BASH]);
    const first = await client.invoke("clean up", { threadId: "t1" });
    const done = await client.resume("t1", first.run_id, { decision: "reject", reason: "not on a Friday" });
    expect(done.status).toBe("success");
    expect(ledger).toEqual([]);
    const seen = calls().at(-1)?.messages ?? [];
    const result = seen.at(-1);
    expect(result?.getType()).toBe("tool");
    expect(String(result?.content)).toContain("a person rejected this call: not on a Friday");
    expect(done.output).toContain("not on a Friday");
  });

  it("a call no rule covers runs without a pause (and a condition that does not hold covers nothing)", async () => {
    const { client, ledger } = await setup([
      { name: "read_notes", args: { q: "x" }, id: "call_read" },
      { name: "write_file", args: { path: "notes.md", content: "hi" }, id: "call_write" },
    ]);
    const result = await client.invoke("note it", { threadId: "t1" });
    expect(result.status).toBe("success");
    expect(ledger.map((e) => e.tool).sort()).toEqual(["read_notes", "write_file"]);
  });
});

describe("several calls in one model turn", () => {
  const TWO = [
    { name: "bash", args: { command: "make clean" }, id: "call_a" },
    { name: "write_file", args: { path: "/etc/hosts", content: "x" }, id: "call_b" },
    { name: "read_notes", args: {}, id: "call_c" },
  ];

  it("pause together in one interrupt, before any of the turn's tools runs; one decision covers them all", async () => {
    const { client, ledger } = await setup(TWO);
    const first = await client.invoke("do both", { threadId: "t1" });
    expect(first.status).toBe("paused");
    expect(pendingIds(first)).toEqual(["call_a", "call_b"]);
    expect(ledger).toEqual([]);
    const done = await client.resume("t1", first.run_id, { decision: "approve" });
    expect(done.status).toBe("success");
    expect(ledger.map((e) => e.tool).sort()).toEqual(["bash", "read_notes", "write_file"]);
  });

  it("are decided one by one: the run stays paused (for the calls left) until each has a decision", async () => {
    const { client, ledger } = await setup(TWO);
    const first = await client.invoke("do both", { threadId: "t1" });
    const partial = await client.resume("t1", first.run_id, { decisions: { call_b: { decision: "reject", reason: "hosts stays" } } });
    expect(partial.status).toBe("paused");
    expect(partial.run_id).toBe(first.run_id);
    expect(pendingIds(partial)).toEqual(["call_a"]);
    expect(ledger).toEqual([]);
    // A decision on a call no longer pending is refused, and the run stays paused.
    const stale = await client.resume("t1", first.run_id, { decisions: { call_b: { decision: "approve" } } }).catch((e: unknown) => e);
    expect(isAntlerError(stale, RuntimeErrorCodes.RESUME_INVALID)).toBe(true);
    const done = await client.resume("t1", first.run_id, {
      decisions: { call_a: { decision: "edit", args: { command: "make -n clean" } } },
    });
    expect(done.status).toBe("success");
    expect(ledger.sort((x, y) => x.tool.localeCompare(y.tool))).toEqual([
      { tool: "bash", args: { command: "make -n clean" } },
      { tool: "read_notes", args: {} },
    ]);
    expect(done.output).toContain("[call_b] Refused: write_file was not run: a person rejected this call: hosts stays");
  });

  it("an edit without naming the call is refused when several are pending", async () => {
    const { client } = await setup(TWO);
    const first = await client.invoke("do both", { threadId: "t1" });
    const refused = await client.resume("t1", first.run_id, { decision: "edit", args: { command: "ls" } }).catch((e: unknown) => e);
    expect(isAntlerError(refused, RuntimeErrorCodes.RESUME_INVALID)).toBe(true);
    expect((refused as Error).message).toContain("edit names one call, but 2 are pending");
  });
});

describe("runs that cannot wait, and pauses that expire", () => {
  it("a non-interactive run never pauses: the rule's non_interactive default applies at once (reject unless configured)", async () => {
    const { client, ledger } = await setup(
      [
        { name: "bash", args: { command: "make" }, id: "call_a" },
        { name: "write_file", args: { path: "/etc/motd", content: "hi" }, id: "call_b" },
      ],
      {
        approval: {
          rules: [
            { name: "shell", tools: ["bash"] },
            { name: "writes", groups: ["file:write"], non_interactive: "approve" },
          ],
        },
      },
    );
    const result = await client.invoke("nightly", {
      threadId: "t1",
      principal: INTERNAL_PRINCIPAL,
      context: { non_interactive: true },
    });
    expect(result.status).toBe("success");
    expect(ledger).toEqual([{ tool: "write_file", args: { path: "/etc/motd", content: "hi" } }]);
    expect(result.output).toContain(
      '[call_a] Refused: bash was not run: a person rejected this call: this run cannot wait for a person (non-interactive), and rule "shell" rejects by default.',
    );
    expect((await client.getRun("t1", result.run_id)).status).toBe("success");
  });

  it("timeout: a pause past its deadline gets the rule's on_timeout decision from the heartbeat, on the same run", async () => {
    const ledger: Ledger = [];
    const { client } = await approvalClient({
      dir: temp.tempDir("antler-approval-"),
      ledger,
      script: callThenReport([BASH, { name: "write_file", args: { path: "/etc/x", content: "y" }, id: "call_w" }]),
      approval: {
        rules: [
          { name: "shell", tools: ["bash"], timeout: "200ms", on_timeout: "approve" },
          { name: "writes", groups: ["file:write"], timeout: "1h" },
        ],
      },
      runLeases: { heartbeatMs: 50 },
    });
    open.push(client);
    const first = await client.invoke("clean up", { threadId: "t1" });
    expect(first.status).toBe("paused");
    // The earliest rule's timeout is the pause's deadline; each call gets its own rule's default.
    expect(first.interrupt?.on_timeout).toEqual({
      decisions: {
        call_bash: { decision: "approve" },
        call_w: { decision: "reject", reason: 'nobody approved this call within the approval timeout of rule "writes".' },
      },
    });
    const release = await client.sweepWhileIdle();
    try {
      await expect.poll(async () => (await client.getRun("t1", first.run_id)).status, { timeout: 10_000, interval: 50 }).toBe("success");
    } finally {
      release();
    }
    expect(ledger).toEqual([{ tool: "bash", args: { command: "rm -rf build" } }]);
    const thread = await client.getThread("t1");
    expect(thread.messages.at(-1)?.content).toContain('within the approval timeout of rule "writes"');
  });

  it("cancelling a paused run ends it cancelled and frees the thread", async () => {
    const { client, ledger } = await setup([BASH]);
    const first = await client.invoke("clean up", { threadId: "t1" });
    expect((await client.cancelRun("t1", first.run_id)).status).toBe("cancelled");
    const refused = await client.resume("t1", first.run_id, { decision: "approve" }).catch((e: unknown) => e);
    expect(isAntlerError(refused, RuntimeErrorCodes.RUN_NOT_PAUSED)).toBe(true);
    expect(ledger).toEqual([]);
  });

  it("another user cannot see or resume the run: RUN_NOT_FOUND (not forbidden)", async () => {
    const { client, ledger } = await setup([BASH]);
    const first = await client.invoke("clean up", { threadId: "t1", userId: "alice" });
    const other = await client.resume("t1", first.run_id, { decision: "approve" }, { userId: "mallory" }).catch((e: unknown) => e);
    expect(isAntlerError(other, RuntimeErrorCodes.THREAD_NOT_FOUND) || isAntlerError(other, RuntimeErrorCodes.RUN_NOT_FOUND)).toBe(true);
    expect(ledger).toEqual([]);
    expect((await client.getRun("t1", first.run_id, { userId: "alice" })).status).toBe("paused");
  });
});
