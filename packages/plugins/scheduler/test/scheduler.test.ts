import { randomUUID } from "node:crypto";
import diagnosticsChannel from "node:diagnostics_channel";
import { ErrorCodes, ensureTraceContext, getCurrentTraceId, isAntlerError } from "@antler/kernel";
import { AntlerClient } from "@antler/plugin-runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  isSchedulerError,
  type Occurrence,
  SCHEDULER,
  SCHEDULER_FIRING_CHANNEL,
  type Scheduler,
  SchedulerErrorCodes,
  type SchedulerFiringEvent,
} from "../src/index.js";
import { type Clock, clock, gate, type Harness, harness, schedulerFor, tempDir, waitFor } from "./helpers.js";

const ASK = "ask_clarification";

let dir: ReturnType<typeof tempDir>;
let h: Harness;
let c: Clock;
const open: Scheduler[] = [];
const track = (s: Scheduler) => {
  open.push(s);
  return s;
};

beforeEach(async () => {
  dir = tempDir();
  h = await harness({ baseDir: dir.path });
  c = clock(new Date("2026-06-01T10:00:00Z"));
});

afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  await h.close();
  dir.remove();
});

async function expectCode(promise: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected a rejection").toBeDefined();
  expect(isAntlerError(error) && (error.code as string) === code, `code of ${String(error)}`).toBe(true);
  expect((error as Error).message).toMatch(message);
}

describe("adding tasks", () => {
  it("rejects a bad cron expression, an unknown timezone, a past once time, an unknown model and both at+cron, with coded errors", async () => {
    const s = track(schedulerFor(h, c));
    await expectCode(
      s.add("alice", { prompt: "p", cron: "every day" }),
      SchedulerErrorCodes.INVALID,
      /cron expression "every day" has 2 field/,
    );
    await expectCode(
      s.add("alice", { prompt: "p", cron: "0 9 * * *", timezone: "Europe/Berln" }),
      SchedulerErrorCodes.INVALID,
      /unknown timezone "Europe\/Berln"/,
    );
    await expectCode(
      s.add("alice", { prompt: "p", at: "2026-06-01T09:59:00Z" }),
      SchedulerErrorCodes.INVALID,
      /once time 2026-06-01T09:59:00.000Z is in the past/,
    );
    await expectCode(
      s.add("alice", { prompt: "p", at: "2026-06-02T09:00:00Z", model: "nope" }),
      ErrorCodes.MODEL_NOT_FOUND,
      /model "nope" is not configured/,
    );
    await expectCode(
      s.add("alice", { prompt: "p", at: "2026-06-02T09:00:00Z", cron: "0 9 * * *" }),
      SchedulerErrorCodes.INVALID,
      /exactly one of `at`/,
    );
    await expectCode(s.add("alice", { prompt: " ", cron: "0 9 * * *" }), SchedulerErrorCodes.INVALID, /prompt is empty/);
    expect(await s.list(null)).toEqual([]);
  });

  it("refuses server-owned context keys such as non_interactive and user_id in a task's context", async () => {
    const s = track(schedulerFor(h, c));
    await expectCode(
      s.add("alice", { prompt: "p", cron: "0 9 * * *", context: { non_interactive: false, topic: "x" } }),
      ErrorCodes.CONTEXT_FORBIDDEN_KEY,
      /non_interactive are set by the server/,
    );
    await expectCode(
      s.add("alice", { prompt: "p", cron: "0 9 * * *", context: { user_id: "bob" } }),
      ErrorCodes.CONTEXT_FORBIDDEN_KEY,
      /user_id/,
    );
  });

  it("stores a cron task with its next fire time computed in its timezone", async () => {
    const s = track(schedulerFor(h, c));
    const task = await s.add("alice", { prompt: "daily report", cron: "0 9 * * *", timezone: "Europe/Berlin", name: "report" });
    expect(task).toMatchObject({
      kind: "cron",
      state: "active",
      timezone: "Europe/Berlin",
      thread_policy: "new",
      thread_id: null,
      run_count: 0,
    });
    // 10:00Z on 1 June is 12:00 in Berlin: the next 09:00 Berlin is tomorrow 07:00Z.
    expect(task.next_fire_at).toBe("2026-06-02T07:00:00.000Z");
    expect(await s.get("alice", task.id)).toEqual(task);
  });
});

describe("firing", () => {
  it("fires a due once task exactly once through the normal run path: non-interactive, no ask_clarification, its own trace id recorded", async () => {
    const s = track(schedulerFor(h, c));
    const firings: SchedulerFiringEvent[] = [];
    const onFiring = (m: unknown) => void firings.push(m as SchedulerFiringEvent);
    diagnosticsChannel.subscribe(SCHEDULER_FIRING_CHANNEL, onFiring);
    const task = await s.add("alice", { prompt: "summarize the news", at: "2026-06-01T10:01:00Z" });
    expect((await s.pollOnce()).claimed).toEqual([]);
    c.advance(60_000);
    const first = await s.pollOnce();
    expect(first.claimed).toHaveLength(1);
    await s.drain();
    c.advance(60_000);
    expect(await s.pollOnce()).toEqual({ claimed: [], skipped: [], takenOver: [] });
    diagnosticsChannel.unsubscribe(SCHEDULER_FIRING_CHANNEL, onFiring);
    // One firing published for metrics, and none for the polls that found nothing due.
    expect(firings).toEqual([{ task_id: task.id, trigger: "schedule", result: "fired" }]);

    const runs = await s.runs("alice", task.id);
    expect(runs).toHaveLength(1);
    const [run] = runs;
    expect(run).toMatchObject({
      status: "succeeded",
      trigger: "schedule",
      attempt: 1,
      scheduled_for: "2026-06-01T10:01:00.000Z",
      error: null,
    });
    expect(run?.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(run?.agent_run_id).toBeTruthy();
    const after = await s.get("alice", task.id);
    expect(after).toMatchObject({
      state: "done",
      next_fire_at: null,
      run_count: 1,
      last_status: "succeeded",
      last_trace_id: run?.trace_id,
      lease_owner: null,
    });

    expect(h.model().calls).toHaveLength(1);
    expect(h.model().calls[0]?.tools).not.toContain(ASK);
    expect(h.contexts).toHaveLength(1);
    expect(h.contexts[0]).toMatchObject({
      non_interactive: true,
      user_id: "alice",
      thread_id: run?.thread_id,
      antler_trace_id: run?.trace_id,
      scheduled_task_id: task.id,
    });
  });

  it("runs a task that names a custom agent as that agent (its soul reaches the model); an unknown agent is refused when the task is added", async () => {
    const client = new AntlerClient({ kernel: h.kernel });
    await client.saveAgent("digest", { soul: "You are Digest, you write morning briefs." }, { userId: "alice" });
    await client.close();
    const s = track(schedulerFor(h, c));
    await expect(s.add("bob", { prompt: "brief me", at: "2026-06-01T10:01:00Z", agent: "digest" })).rejects.toMatchObject({
      code: "ANTLER_ERR_AGENT_NOT_FOUND",
    });
    const task = await s.add("alice", { prompt: "brief me", at: "2026-06-01T10:01:00Z", agent: "digest" });
    expect(task.agent_name).toBe("digest");
    c.advance(60_000);
    await s.pollOnce();
    await s.drain();
    expect((await s.runs("alice", task.id))[0]?.status).toBe("succeeded");
    expect(h.model().calls[0]?.messages[0]?.text).toContain("You are Digest, you write morning briefs.");
    expect(h.contexts[0]).toMatchObject({ agent_name: "digest", non_interactive: true });
  });

  it("control: the same kernel offers ask_clarification to an interactive run, so the check above can fail", async () => {
    const client = new AntlerClient({ kernel: h.kernel });
    try {
      await client.chat("hello", { userId: "alice" });
    } finally {
      await client.close();
    }
    expect(h.model().calls[0]?.tools).toContain(ASK);
    expect(h.contexts[0]?.non_interactive).toBeUndefined();
  });

  it("gives every occurrence a fresh trace id, never the scope the poller was started in", async () => {
    const s = track(schedulerFor(h, c));
    const task = await s.add("alice", { prompt: "tick", cron: "* * * * *" });
    const seen: Array<string | null> = [];
    await ensureTraceContext("outer-poller-scope", async () => {
      for (let i = 0; i < 3; i++) {
        c.advance(60_000);
        const polled = await s.pollOnce();
        expect(polled.claimed).toHaveLength(1);
        await s.drain();
      }
      seen.push(getCurrentTraceId());
    });
    const traces = (await s.runs("alice", task.id)).map((r) => r.trace_id);
    expect(traces).toHaveLength(3);
    expect(new Set(traces).size).toBe(3);
    expect(traces).not.toContain("outer-poller-scope");
    expect(h.contexts.map((x) => x.antler_trace_id).sort()).toEqual([...traces].sort());
    expect(seen).toEqual(["outer-poller-scope"]);
  });

  it("keeps a manual trigger inside a trace scope (a gateway request) on that scope's trace, in the record and the run", async () => {
    const s = track(schedulerFor(h, c));
    const task = await s.add("alice", { prompt: "now please", cron: "0 9 * * *" });
    const triggered = await ensureTraceContext("request-trace", async () => {
      const result = await s.trigger("alice", task.id);
      return { run: result.run, finished: await result.done };
    });
    expect(triggered.run.trace_id).toBe("request-trace");
    expect(triggered.finished).toMatchObject({ status: "succeeded", trace_id: "request-trace" });
    expect((await s.get("alice", task.id)).last_trace_id).toBe("request-trace");
    expect(h.contexts.map((x) => x.antler_trace_id)).toEqual(["request-trace"]);
  });

  it("fires occurrences of a poller started inside a trace scope on fresh ids, never the starter's", async () => {
    const s = track(schedulerFor(h, c, { config: { poll_interval_seconds: 0.05 } }));
    const task = await s.add("alice", { prompt: "tick", cron: "* * * * *" });
    c.advance(60_000);
    ensureTraceContext("starter-scope", () => s.startPoller());
    const runs = await waitFor(async () => {
      const listed = await s.runs("alice", task.id);
      return listed[0]?.status === "succeeded" ? listed : undefined;
    });
    await s.stopPoller();
    expect(runs[0]?.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(h.contexts.map((x) => x.antler_trace_id)).toEqual([runs[0]?.trace_id]);
  });

  it("moves a daily Europe/Berlin task's next fire from 08:00Z to 07:00Z across the spring DST change", async () => {
    c = clock(new Date("2026-03-28T07:59:00Z"));
    const s = track(schedulerFor(h, c));
    const task = await s.add("alice", { prompt: "morning brief", cron: "0 9 * * *", timezone: "Europe/Berlin" });
    expect(task.next_fire_at).toBe("2026-03-28T08:00:00.000Z");
    c.advance(60_000);
    expect((await s.pollOnce()).claimed).toHaveLength(1);
    await s.drain();
    expect((await s.get("alice", task.id)).next_fire_at).toBe("2026-03-29T07:00:00.000Z");
  });

  it("uses one fixed thread for every occurrence when the task names one, and a new thread each time otherwise", async () => {
    const s = track(schedulerFor(h, c));
    const fixed = await s.add("alice", { prompt: "a", cron: "* * * * *", thread_id: "standup" });
    const fresh = await s.add("alice", { prompt: "b", cron: "* * * * *" });
    for (let i = 0; i < 2; i++) {
      c.advance(60_000);
      await s.pollOnce();
      await s.drain();
    }
    expect(new Set((await s.runs("alice", fixed.id)).map((r) => r.thread_id))).toEqual(new Set(["standup"]));
    expect(new Set((await s.runs("alice", fresh.id)).map((r) => r.thread_id)).size).toBe(2);
  });

  it("an occurrence on a fixed thread that a user run holds waits its turn (enqueue) instead of being refused, and both replies stay", async () => {
    await h.close();
    h = await harness({
      baseDir: dir.path,
      // Unique ids: the user's client and the scheduler's client each count their own model calls.
      respond: (i) => (i === 0 ? { text: "user reply", delayMs: 400, id: randomUUID() } : { text: "scheduled reply", id: randomUUID() }),
    });
    const user = new AntlerClient({ kernel: h.kernel });
    try {
      await user.createThread({ threadId: "standup", userId: "alice" });
      const chatting = user.invoke("hello", { threadId: "standup", userId: "alice" });
      await waitFor(async () => ((await user.listRuns("standup", { userId: "alice" })).length === 1 ? true : undefined));
      const s = track(schedulerFor(h, c));
      const task = await s.add("alice", { prompt: "standup time", cron: "* * * * *", thread_id: "standup" });
      c.advance(60_000);
      await s.pollOnce();
      await s.drain();
      expect((await chatting).output).toBe("user reply");
      expect((await s.runs("alice", task.id)).map((r) => r.status)).toEqual(["succeeded"]);
      const replies = (await user.getThread("standup", { userId: "alice" })).messages.filter((m) => m.type === "ai").map((m) => m.content);
      expect(replies).toEqual(["user reply", "scheduled reply"]);
    } finally {
      await user.close();
    }
  });

  it("records a failing occurrence as failed with the error, and the cron task keeps its schedule", async () => {
    const s = track(
      schedulerFor(h, c, {
        runner: async () => {
          throw new Error("sandbox exploded");
        },
      }),
    );
    const task = await s.add("alice", { prompt: "x", cron: "*/5 * * * *" });
    c.advance(5 * 60_000);
    await s.pollOnce();
    await s.drain();
    const [run] = await s.runs("alice", task.id);
    expect(run?.status).toBe("failed");
    expect(run?.error).toMatch(/sandbox exploded/);
    expect(await s.get("alice", task.id)).toMatchObject({
      state: "active",
      last_status: "failed",
      next_fire_at: "2026-06-01T10:10:00.000Z",
    });
  });
});

describe("several instances on one database", () => {
  it("claims each due occurrence exactly once when two schedulers poll at the same moment", async () => {
    const runs: string[] = [];
    const runner = async (o: Occurrence) => {
      runs.push(o.run.id);
      return {};
    };
    const a = track(schedulerFor(h, c, { instanceId: "a", runner, config: { max_concurrent_runs: 50 } }));
    const b = track(schedulerFor(h, c, { instanceId: "b", runner, config: { max_concurrent_runs: 50 } }));
    const tasks = [];
    for (let i = 0; i < 12; i++) tasks.push(await a.add("alice", { prompt: `t${i}`, at: "2026-06-01T10:00:30Z" }));
    // Open b's connection (and its migrations) first; the race under test is the claim, not two migrations in one process.
    expect(await b.list(null)).toHaveLength(12);
    c.advance(60_000);
    const [ra, rb] = await Promise.all([a.pollOnce(), b.pollOnce()]);
    await Promise.all([a.drain(), b.drain()]);
    expect(ra.claimed.length + rb.claimed.length).toBe(12);
    expect(new Set([...ra.claimed, ...rb.claimed]).size).toBe(12);
    expect(runs).toHaveLength(12);
    for (const t of tasks) expect(await a.runs(null, t.id)).toHaveLength(1);
  });
});

describe("overlap policy skip", () => {
  it("skips an occurrence while the previous one of the same task still runs, and records it as skipped", async () => {
    const release = gate();
    const a = track(
      schedulerFor(h, c, {
        config: { lease_seconds: 600 },
        runner: async () => {
          await release.promise;
          return {};
        },
      }),
    );
    const task = await a.add("alice", { prompt: "slow", cron: "* * * * *" });
    c.advance(60_000);
    expect((await a.pollOnce()).claimed).toHaveLength(1);
    c.advance(60_000);
    const second = await a.pollOnce();
    expect(second.claimed).toEqual([]);
    expect(second.skipped).toHaveLength(1);
    release.open();
    await a.drain();
    c.advance(60_000);
    expect((await a.pollOnce()).claimed).toHaveLength(1);
    await a.drain();
    const runs = (await a.runs("alice", task.id)).reverse();
    expect(runs.map((r) => [r.scheduled_for, r.status])).toEqual([
      ["2026-06-01T10:01:00.000Z", "succeeded"],
      ["2026-06-01T10:02:00.000Z", "skipped"],
      ["2026-06-01T10:03:00.000Z", "succeeded"],
    ]);
    expect(runs[1]?.error).toMatch(new RegExp(`previous occurrence \\(${runs[0]?.id}\\) is still running`));
  });

  it("records a manual trigger as skipped while an occurrence runs", async () => {
    const release = gate();
    const a = track(schedulerFor(h, c, { runner: () => release.promise.then(() => ({})) }));
    const task = await a.add("alice", { prompt: "slow", cron: "0 0 1 1 *" });
    const first = await a.trigger("alice", task.id);
    expect(first.run.status).toBe("running");
    const second = await a.trigger("alice", task.id);
    expect(second.run.status).toBe("skipped");
    release.open();
    expect((await first.done).status).toBe("succeeded");
  });
});

describe("leases", () => {
  it("takes over an occurrence whose instance stopped renewing its lease, as attempt 2 with a new trace id", async () => {
    const a = track(
      schedulerFor(h, c, {
        instanceId: "crashed",
        runner: () => new Promise(() => {}),
        config: { lease_seconds: 30, shutdown_grace_seconds: 0 },
      }),
    );
    const b = track(schedulerFor(h, c, { instanceId: "survivor", config: { lease_seconds: 30 } }));
    const task = await a.add("alice", { prompt: "important", at: "2026-06-01T10:00:10Z" });
    c.advance(10_000);
    expect((await a.pollOnce()).claimed).toHaveLength(1);
    c.advance(20_000);
    expect(await b.pollOnce()).toEqual({ claimed: [], skipped: [], takenOver: [] });
    c.advance(11_000);
    const polled = await b.pollOnce();
    expect(polled.takenOver).toHaveLength(1);
    await b.drain();
    const runs = await b.runs("alice", task.id);
    expect(runs.map((r) => [r.attempt, r.status, r.instance_id])).toEqual([
      [2, "succeeded", "survivor"],
      [1, "interrupted", "crashed"],
    ]);
    expect(runs[0]?.scheduled_for).toBe(runs[1]?.scheduled_for);
    expect(runs[0]?.trace_id).not.toBe(runs[1]?.trace_id);
    expect(runs[1]?.error).toMatch(/the instance running it stopped renewing its lease/);
    expect(await b.get("alice", task.id)).toMatchObject({ state: "done", last_status: "succeeded", lease_owner: null, run_count: 1 });
    expect(h.model().calls).toHaveLength(1);
  });

  it("renews rather than takes over its own occurrence when the lease ran out while the run is still alive here", async () => {
    const release = gate();
    const a = track(schedulerFor(h, c, { config: { lease_seconds: 30 }, runner: () => release.promise.then(() => ({})) }));
    const task = await a.add("alice", { prompt: "x", at: "2026-06-01T10:00:05Z" });
    c.advance(5_000);
    await a.pollOnce();
    c.advance(31_000);
    expect((await a.pollOnce()).takenOver).toEqual([]);
    expect((await a.get("alice", task.id)).lease_expires_at).toBe("2026-06-01T10:01:06.000Z");
    release.open();
    await a.drain();
    expect((await a.runs("alice", task.id)).map((r) => r.status)).toEqual(["succeeded"]);
  });

  it("gives up after max_attempts interrupted attempts and records the occurrence as failed", async () => {
    const hang = () => new Promise<never>(() => {});
    const config = { lease_seconds: 10, max_attempts: 2, shutdown_grace_seconds: 0 };
    const a = track(schedulerFor(h, c, { instanceId: "a", runner: hang, config }));
    const b = track(schedulerFor(h, c, { instanceId: "b", runner: hang, config }));
    const task = await a.add("alice", { prompt: "x", at: "2026-06-01T10:00:05Z" });
    c.advance(5_000);
    await a.pollOnce();
    c.advance(11_000);
    expect((await b.pollOnce()).takenOver).toHaveLength(1);
    c.advance(11_000);
    expect(await a.pollOnce()).toEqual({ claimed: [], skipped: [], takenOver: [] });
    expect(await a.get("alice", task.id)).toMatchObject({ state: "done", last_status: "failed", lease_owner: null });
    expect((await a.get("alice", task.id)).last_error).toMatch(/gave up after 2 interrupted attempt/);
  });

  it("hands an occurrence interrupted by shutdown back at once, so another instance retries it without waiting for the lease", async () => {
    const a = schedulerFor(h, c, {
      instanceId: "stopping",
      runner: (o) => new Promise((_, reject) => o.signal.addEventListener("abort", () => reject(o.signal.reason))),
      config: { lease_seconds: 600, shutdown_grace_seconds: 0 },
    });
    const b = track(schedulerFor(h, c, { instanceId: "other", config: { lease_seconds: 600 } }));
    const task = await b.add("alice", { prompt: "x", at: "2026-06-01T10:00:05Z" });
    c.advance(5_000);
    expect((await a.pollOnce()).claimed).toHaveLength(1);
    await a.close();
    expect((await b.pollOnce()).takenOver).toHaveLength(1);
    await b.drain();
    const runs = await b.runs("alice", task.id);
    expect(runs.map((r) => r.status)).toEqual(["succeeded", "interrupted"]);
    expect(runs[1]?.error).toMatch(/shutting down/);
  });
});

describe("management", () => {
  it("pause stops firing; resume continues a cron task from now without catching up missed occurrences", async () => {
    const s = track(schedulerFor(h, c));
    const task = await s.add("alice", { prompt: "x", cron: "0 * * * *" });
    expect((await s.pause("alice", task.id)).state).toBe("paused");
    c.advance(3 * 3600_000);
    expect((await s.pollOnce()).claimed).toEqual([]);
    const resumed = await s.resume("alice", task.id);
    expect(resumed).toMatchObject({ state: "active", next_fire_at: "2026-06-01T14:00:00.000Z" });
    expect((await s.pollOnce()).claimed).toEqual([]);
    c.advance(3600_000);
    expect((await s.pollOnce()).claimed).toHaveLength(1);
    await s.drain();
  });

  it("a once task paused past its time fires right after resume; a done task cannot be resumed", async () => {
    const s = track(schedulerFor(h, c));
    const task = await s.add("alice", { prompt: "x", at: "2026-06-01T10:05:00Z", paused: true });
    c.advance(10 * 60_000);
    expect((await s.pollOnce()).claimed).toEqual([]);
    await s.resume("alice", task.id);
    expect((await s.pollOnce()).claimed).toHaveLength(1);
    await s.drain();
    await expectCode(s.resume("alice", task.id), SchedulerErrorCodes.INVALID, /already ran/);
  });

  it("answers NOT_FOUND for an unknown id and for another user's task, and the operator (null) sees every user's tasks", async () => {
    const s = track(schedulerFor(h, c));
    const task = await s.add("alice", { prompt: "x", cron: "0 9 * * *" });
    await expectCode(s.get("bob", task.id), SchedulerErrorCodes.NOT_FOUND, /no scheduled task/);
    await expectCode(s.pause("bob", task.id), SchedulerErrorCodes.NOT_FOUND, /no scheduled task/);
    await expectCode(s.trigger("bob", task.id), SchedulerErrorCodes.NOT_FOUND, /no scheduled task/);
    await expectCode(s.remove("bob", task.id), SchedulerErrorCodes.NOT_FOUND, /no scheduled task/);
    await expectCode(s.get(null, "task_missing"), SchedulerErrorCodes.NOT_FOUND, /no scheduled task "task_missing"/);
    expect(await s.list("bob")).toEqual([]);
    expect((await s.list(null)).map((t) => t.id)).toEqual([task.id]);
    await s.remove("alice", task.id);
    expect(await s.list(null)).toEqual([]);
  });

  it("stops the plugin's poller when the kernel closes", async () => {
    const scheduler = h.kernel.scope.resolve(SCHEDULER);
    scheduler.startPoller();
    expect(scheduler.isPolling).toBe(true);
    await h.close();
    expect(scheduler.isPolling).toBe(false);
    await expectCode(scheduler.list(null), ErrorCodes.KERNEL_STATE, /the scheduler is closed/);
  });

  it("is published as SCHEDULER in the kernel's root scope, one instance per kernel", () => {
    const a = h.kernel.scope.resolve(SCHEDULER);
    expect(h.kernel.scope.resolve(SCHEDULER)).toBe(a);
    expect(a.isPolling).toBe(false);
    expect(isSchedulerError(new Error("x"))).toBe(false);
  });
});
