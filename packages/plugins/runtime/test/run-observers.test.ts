import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { AntlerClient, type RunObserver } from "../src/client/client.js";
import type { StreamEvent } from "../src/client/events.js";
import { tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

async function client(script: Parameters<typeof scriptedModelsPlugin>[0]["m"]): Promise<AntlerClient> {
  const dir = tempDir();
  const c = await AntlerClient.create({
    config: { base_dir: dir, models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
    plugins: [scriptedModelsPlugin({ m: script })],
    cwd: dir,
    env: {},
    discover: false,
  });
  clients.push(c);
  return c;
}

function recorder() {
  const calls: string[] = [];
  const events: StreamEvent[] = [];
  const observer: RunObserver = {
    runStarted: (run) => calls.push(`started ${run.runId} ${run.threadId}`),
    runEvent: (_runId, event) => {
      calls.push(`event ${event.type}`);
      events.push(event);
    },
    runEnded: (_runId, outcome, error) => {
      calls.push(`ended ${outcome}${error ? ` ${(error as Error).message.split("\n")[0]}` : ""}`);
    },
  };
  return { calls, events, observer };
}

describe("client.observeRuns", () => {
  it("tells an observer of each run's start, every event before its consumer gets it, and the end once", async () => {
    const c = await client([{ text: "hello there" }]);
    const seen = recorder();
    c.observeRuns(seen.observer);
    const consumed: StreamEvent[] = [];
    for await (const event of c.stream("hi", { threadId: "t1", runId: "r1" })) {
      // The observer already has this event when the consumer gets it.
      expect(seen.events.at(-1)).toBe(event);
      consumed.push(event);
    }
    expect(seen.events).toEqual(consumed);
    expect(seen.calls[0]).toBe("started r1 t1");
    expect(seen.calls.at(-1)).toBe("ended success");
    expect(seen.calls.filter((c) => c.startsWith("ended"))).toHaveLength(1);
  });

  it("reports a run whose consumer stopped as cancelled, and one aborted by its signal as cancelled with the error the stream threw", async () => {
    const c = await client([
      { text: "slow", delayMs: 60_000 },
      { text: "slow too", delayMs: 60_000 },
    ]);
    const seen = recorder();
    c.observeRuns(seen.observer);
    for await (const _event of c.stream("hi", { threadId: "t2" })) break;
    expect(seen.calls.at(-1)).toBe("ended cancelled");
    const abort = new AbortController();
    const running = c.invoke("again", { threadId: "t3", signal: abort.signal });
    await expect.poll(() => seen.calls.filter((call) => call.startsWith("started")).length).toBe(2);
    abort.abort("stop");
    await expect(running).rejects.toThrow();
    expect(seen.calls.at(-1)).toMatch(/^ended cancelled \S/);
  });

  it("a throwing observer never breaks the run, and a removed observer hears nothing more", async () => {
    const c = await client([{ text: "fine" }, { text: "fine again" }]);
    const remove = c.observeRuns({
      runStarted: () => {
        throw new Error("observer bug");
      },
      runEvent: () => {
        throw new Error("observer bug");
      },
      runEnded: async () => {
        throw new Error("observer bug");
      },
    });
    expect((await c.invoke("hi", { threadId: "t4" })).output).toBe("fine");
    remove();
    const seen = recorder();
    const removeSeen = c.observeRuns(seen.observer);
    removeSeen();
    await c.invoke("hi again", { threadId: "t5" });
    expect(seen.calls).toEqual([]);
  });
});
