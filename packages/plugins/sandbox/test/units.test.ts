import { setTimeout as sleep } from "node:timers/promises";
import type { AcquireOptions, ExecResult, Sandbox, SandboxProvider } from "@antler/kernel";
import { runPluginConformance } from "@antler/kernel/testing";
import localPlugin from "@antler/sandbox-local";
import { ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import sandboxPlugin, {
  countOccurrences,
  createSandboxMiddlewareSpec,
  formatExecResult,
  KeyedLock,
  MAX_READ_STAMPS,
  mergeReadStamps,
  normalizeVirtualPath,
  readOnlyRootOf,
  SandboxRegistry,
  truncateMiddle,
  withStateUpdate,
} from "../src/index.js";

runPluginConformance(sandboxPlugin, {
  dependencies: [localPlugin],
  invalidConfigs: [{ glob_max_results: 0 }, { grep_max_results: "many" }],
});

/** A provider whose sandboxes are bare ids: enough to watch the registry acquire and release. */
function fakeProvider(options: { delayMs?: number; failFirst?: boolean } = {}) {
  const acquired: string[] = [];
  const released: string[] = [];
  let failures = options.failFirst ? 1 : 0;
  const provider: SandboxProvider = {
    id: "fake",
    isolated: true,
    async acquire(threadId: string, { userId }: AcquireOptions): Promise<Sandbox> {
      acquired.push(`${userId}/${threadId}`);
      if (options.delayMs) await sleep(options.delayMs);
      if (failures > 0) {
        failures -= 1;
        throw new Error("backend unreachable");
      }
      return { id: `fake:${userId}/${threadId}` } as Sandbox;
    },
    get: () => undefined,
    async release(id: string) {
      released.push(id);
    },
    reset: async () => {},
    close: async () => {},
  };
  return { provider, acquired, released };
}

describe("SandboxRegistry", () => {
  it("acquires once for concurrent calls of one thread, and keeps threads and users apart", async () => {
    const fake = fakeProvider({ delayMs: 20 });
    const registry = new SandboxRegistry(() => fake.provider);
    const [a1, a2, b, other] = await Promise.all([
      registry.acquire({ userId: "u", threadId: "a" }),
      registry.acquire({ userId: "u", threadId: "a" }),
      registry.acquire({ userId: "u", threadId: "b" }),
      registry.acquire({ userId: "v", threadId: "a" }),
    ]);
    expect(a1).toBe(a2);
    expect([a1.sandbox.id, b.sandbox.id, other.sandbox.id]).toEqual(["fake:u/a", "fake:u/b", "fake:v/a"]);
    expect(fake.acquired.sort()).toEqual(["u/a", "u/b", "v/a"]);
    a1.stamps.set("/mnt/user-data/workspace/x", "h");
    expect(b.stamps.size).toBe(0);
    expect(registry.current({ userId: "u", threadId: "b" })).toBe(b);
  });

  it("forgets a failed acquisition so the next call retries", async () => {
    const fake = fakeProvider({ failFirst: true });
    const registry = new SandboxRegistry(() => fake.provider);
    await expect(registry.acquire({ userId: "u", threadId: "t" })).rejects.toThrow("backend unreachable");
    expect(registry.size).toBe(0);
    expect((await registry.acquire({ userId: "u", threadId: "t" })).sandbox.id).toBe("fake:u/t");
  });

  it("releases after the agent unless another run on the thread is still going; the last run's end releases then", async () => {
    const fake = fakeProvider();
    const registry = new SandboxRegistry(() => fake.provider);
    const scope = { userId: "u", threadId: "t" };
    registry.runStarted(scope);
    registry.runStarted(scope);
    await registry.acquire(scope);
    await registry.releaseAfterAgent(scope);
    expect(fake.released).toEqual([]);
    await registry.runEnded(scope);
    expect(fake.released).toEqual([]);
    await registry.runEnded(scope);
    expect(fake.released).toEqual(["fake:u/t"]);
    expect(registry.size).toBe(0);

    // Without the kernel's run hooks, afterAgent counts as the only run.
    await registry.acquire(scope);
    await registry.releaseAfterAgent(scope);
    expect(fake.released).toEqual(["fake:u/t", "fake:u/t"]);
  });
});

describe("KeyedLock", () => {
  it("runs work on one key in arrival order and different keys in parallel", async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const job = (key: string, name: string, ms: number) =>
      lock.run(key, async () => {
        log.push(`start ${name}`);
        await sleep(ms);
        log.push(`end ${name}`);
      });
    await Promise.all([job("p", "1", 30), job("p", "2", 1), job("q", "3", 1)]);
    expect(log.indexOf("end 1")).toBeLessThan(log.indexOf("start 2"));
    expect(log.indexOf("start 3")).toBeLessThan(log.indexOf("end 1"));
    expect(lock.size).toBe(0);
  });

  it("keeps going after a failed job", async () => {
    const lock = new KeyedLock();
    await expect(lock.run("k", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await lock.run("k", async () => "next")).toBe("next");
  });
});

describe("output shaping", () => {
  it("truncateMiddle keeps head and tail within the limit and counts the cut", () => {
    const text = "a".repeat(500) + "b".repeat(500);
    const out = truncateMiddle(text, 200);
    expect(out.length).toBeLessThanOrEqual(200);
    expect(out.startsWith("aaa")).toBe(true);
    expect(out.endsWith("bbb")).toBe(true);
    const cut = Number(/(\d+) characters cut/.exec(out)?.[1]);
    const kept = out.replace(/\n\n\[\.\.\. \d+ characters cut from the middle of the output \.\.\.\]\n\n/, "");
    expect(kept.length + cut).toBe(1000);
    expect(truncateMiddle("short", 200)).toBe("short");
  });

  it("formatExecResult shows stderr, the exit code and a timeout, and keeps the footer when output is cut", () => {
    const base: ExecResult = { exitCode: 0, stdout: "", stderr: "", timedOut: false, signal: null, durationMs: 1 };
    expect(formatExecResult(base, 5, 100)).toBe("(no output)");
    expect(formatExecResult({ ...base, stdout: "out\n", stderr: "warn\n", exitCode: 2 }, 5, 100)).toBe(
      "out\n[stderr]\nwarn\n[exit code 2]",
    );
    const long = formatExecResult({ ...base, stdout: "x".repeat(10_000), exitCode: null, timedOut: true, signal: "SIGKILL" }, 3, 500);
    expect(long.length).toBeLessThanOrEqual(500);
    expect(long.endsWith("[timed out after 3s; the command and every process it started were killed]")).toBe(true);
  });

  it("countOccurrences counts non-overlapping matches", () => {
    expect(countOccurrences("aaaa", "aa")).toBe(2);
    expect(countOccurrences("abc", "d")).toBe(0);
  });
});

describe("paths and stamps", () => {
  it("normalizes virtual paths and finds read-only roots", () => {
    expect(normalizeVirtualPath("notes/./a.md")).toBe("/mnt/user-data/workspace/notes/a.md");
    expect(normalizeVirtualPath("/mnt/user-data/outputs//r.md/")).toBe("/mnt/user-data/outputs/r.md");
    expect(readOnlyRootOf(normalizeVirtualPath("/mnt/user-data/workspace/../../skills/x"))).toBe("/mnt/skills");
    expect(readOnlyRootOf("/mnt/acp-workspace")).toBe("/mnt/acp-workspace");
    expect(readOnlyRootOf("/mnt/skillset/x")).toBeUndefined();
  });

  it("mergeReadStamps merges per path, clears on null and drops the oldest past the cap", () => {
    expect(mergeReadStamps({ a: "1" }, { b: "2", a: "3" })).toEqual({ a: "3", b: "2" });
    expect(mergeReadStamps({ a: "1" }, null)).toEqual({});
    let stamps: Record<string, string> | undefined;
    for (let i = 0; i < MAX_READ_STAMPS + 5; i++) stamps = mergeReadStamps(stamps, { [`/f${i}`]: "h" });
    expect(Object.keys(stamps ?? {})).toHaveLength(MAX_READ_STAMPS);
    expect(stamps).not.toHaveProperty("/f0");
    expect(stamps).toHaveProperty(`/f${MAX_READ_STAMPS + 4}`);
  });

  it("withStateUpdate adds writes to a ToolMessage or to a Command's own update", () => {
    const message = new ToolMessage({ content: "ok", tool_call_id: "c1" });
    const fromMessage = withStateUpdate(message, [["sandbox", { sandbox_id: "s" }]]);
    expect(fromMessage.update).toEqual([
      ["messages", [message]],
      ["sandbox", { sandbox_id: "s" }],
    ]);
    const fromCommand = withStateUpdate(new Command({ update: { _read_stamps: { "/x": "h" }, messages: [message] } }), [
      ["sandbox", { sandbox_id: "s" }],
    ]);
    expect(fromCommand.update).toEqual([
      ["_read_stamps", { "/x": "h" }],
      ["messages", [message]],
      ["sandbox", { sandbox_id: "s" }],
    ]);
  });
});

describe("Sandbox middleware", () => {
  it("stamps sandbox_id once per graph: a subagent sharing its parent's lease records it in its own state too", async () => {
    const fake = fakeProvider();
    const registry = new SandboxRegistry(() => fake.provider);
    const spec = createSandboxMiddlewareSpec({ registry, hostBashAllowed: () => true, providerId: () => "fake" });
    const wrap = spec.wrapToolCall as NonNullable<typeof spec.wrapToolCall>;
    const call = (graph: string, id: string) =>
      wrap(
        {
          toolCall: { id, name: "ls", args: {} },
          tool: {},
          state: { messages: [] },
          runtime: { context: { thread_id: "t", user_id: "u" }, configurable: { thread_id: graph } },
        } as never,
        async () => new ToolMessage({ content: "ok", tool_call_id: id }),
      );
    const stamped = (result: unknown) => result instanceof Command && JSON.stringify(result.update).includes('"sandbox_id":"fake:u/t"');
    // Parent, then a subagent (its own checkpoint thread), then the parent again in the same step.
    expect(stamped(await call("u::t", "c1"))).toBe(true);
    expect(stamped(await call("subagent-1", "c2"))).toBe(true);
    expect(stamped(await call("u::t", "c3"))).toBe(false);
  });
});
