import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describeWithChromium, type ScriptFunction, scriptedModelsPlugin } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { type BrowserSessionManager, createBrowserPlugin } from "../src/index.js";
import { html, startSite, type TestSite } from "./fixtures.js";

const ALICE = "alice-key-0123456789abcdef";
const MIB = 1024 * 1024;
const FRAME_INTERVAL_MS = 100;
/** What a viewer gets in 60 s at the default frame_interval_ms (1000) while nobody touches the page. */
const FRAMES_IN_A_MINUTE = 60;
/**
 * Captures are synthetic (the page's screenshot is replaced by fresh random bytes, at once): every one differs from
 * the last, so none is skipped as unchanged, and each is large, so a queue of them shows in memory within seconds.
 */
const FRAME_BYTES = 1024 * 1024;

/** The engine's collector, reachable without starting the worker with --expose-gc. */
function collector(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/** Heap (JS objects, plus Buffers and other memory outside it) and RSS, after full collections. */
function settledMemory(gc: () => void): { heap: number; rss: number } {
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external, rss: m.rss };
}

/** Polls an async condition until it holds (20 s at most). */
async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface FrameEvent {
  seq: number;
  at: number;
  bytes: number;
}

/** Reads `frame` events from a live view response as they come (`stop()` cancels the body). */
function frameReader(response: Response): { next(): Promise<FrameEvent>; stop(): Promise<void> } {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  return {
    async next() {
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!block.startsWith("event: frame\n")) continue;
          const data = JSON.parse(block.slice(block.indexOf("data: ") + 6)) as { seq: number; at: number; data: string };
          return { seq: data.seq, at: data.at, bytes: data.data.length };
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("the live stream ended");
        buffer += decoder.decode(value, { stream: true });
      }
    },
    stop: () => reader.cancel().catch(() => undefined),
  };
}

describeWithChromium("browser live view: a viewer that does not read", (executablePath) => {
  let site: TestSite;
  let gateway: RunningGateway;
  let cwd: string;
  let close: () => Promise<void>;
  const gc = collector();

  const call = (path: string, init: { json?: unknown; signal?: AbortSignal } = {}) =>
    fetch(`${gateway.url}/api${path}`, {
      method: init.json === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${ALICE}`, ...(init.json === undefined ? {} : { "content-type": "application/json" }) },
      ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
      ...(init.signal ? { signal: init.signal } : {}),
    });
  const browserState = async () => (await (await call("/threads/t1/browser")).json()) as { viewer: unknown; pinned: boolean };

  /** Opens the live view on a raw socket that never reads a byte of the answer. */
  function stalledViewer(): Promise<Socket> {
    const { hostname, port } = new URL(gateway.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        leftovers.push(() => socket.destroy());
        socket.pause();
        socket.write(
          `GET /api/threads/t1/browser/live HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${ALICE}\r\nAccept: text/event-stream\r\n\r\n`,
        );
        resolve(socket);
      });
      socket.on("error", reject);
    });
  }

  let captures = 0;
  /** Replaces the session page's screenshot with a synthetic frame source, counting the captures asked for. */
  function syntheticFrames(manager: BrowserSessionManager): void {
    const page = manager.get({ userId: "alice", threadId: "t1" })?.page;
    if (!page) throw new Error("no browser session for t1");
    page.screenshot = (async () => {
      captures++;
      return randomBytes(FRAME_BYTES);
    }) as typeof page.screenshot;
  }

  beforeAll(async () => {
    site = await startSite({ "/": html("<p>Live view under backpressure</p>") });
    cwd = mkdtempSync(join(tmpdir(), "antler-browser-backpressure-"));
    const open: ScriptFunction = (messages) =>
      messages.at(-1)?.getType() === "tool"
        ? { text: "opened" }
        : { toolCalls: [{ name: "browser_navigate", args: { url: `${site.origin}/` } }] };
    let manager: BrowserSessionManager | undefined;
    const client = await AntlerClient.create({
      config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
      plugins: [
        scriptedModelsPlugin({ m: open }),
        {
          plugin: createBrowserPlugin({ onManager: (m) => (manager = m) }),
          config: {
            executable_path: executablePath,
            allow_private_addresses: true,
            max_sessions: 1,
            live: { frame_interval_ms: FRAME_INTERVAL_MS },
          },
        },
      ],
      cwd,
      env: {},
      discover: false,
      logger: (await import("@antler/kernel/testing")).captureLogs({ level: "warn" }).logger,
    });
    gateway = await startGateway({
      client,
      config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: ALICE, user: "alice" }] } },
      shutdownGraceMs: 500,
    });
    close = async () => {
      await gateway.close();
      await client.close();
      await site.close();
      rmSync(cwd, { recursive: true, force: true });
    };
    await call("/threads", { json: { thread_id: "t1" } });
    expect((await call("/threads/t1/runs/wait", { json: { message: "open it" } })).status).toBe(200);
    syntheticFrames(manager as BrowserSessionManager);
  }, 120_000);
  afterAll(() => close?.());
  // A failed assertion must not leave its viewer holding the view for the next test.
  const leftovers: Array<() => void> = [];
  afterEach(async () => {
    for (const end of leftovers.splice(0)) end();
    await until(async () => (await browserState()).viewer === null, "every viewer to go");
  });

  it("keeps memory flat while a viewer reads nothing for a minute's worth of frames, and frees it all when the viewer goes", async () => {
    const before = settledMemory(gc);
    const socket = await stalledViewer();
    await until(async () => (await browserState()).viewer !== null, "the stalled viewer to hold the view");
    const capturesBefore = captures;
    // As many frame periods as a minute holds at the default period.
    await new Promise((r) => setTimeout(r, FRAMES_IN_A_MINUTE * FRAME_INTERVAL_MS + 500));
    const stalled = settledMemory(gc);
    const grown = {
      heapMiB: (stalled.heap - before.heap) / MIB,
      rssMiB: (stalled.rss - before.rss) / MIB,
      captures: captures - capturesBefore,
    };
    expect(grown.heapMiB, JSON.stringify(grown)).toBeLessThan(16);
    expect(grown.rssMiB, JSON.stringify(grown)).toBeLessThan(16);

    socket.destroy();
    await until(async () => {
      const state = await browserState();
      return state.viewer === null && !state.pinned;
    }, "the closed viewer to release the session");
    const after = settledMemory(gc);
    expect((after.heap - before.heap) / MIB).toBeLessThan(4);
    // The view is free again: a new viewer gets frames.
    const controller = new AbortController();
    const frames = frameReader(await call("/threads/t1/browser/live", { signal: controller.signal }));
    expect((await frames.next()).bytes).toBeGreaterThan(FRAME_BYTES);
    controller.abort();
    await frames.stop();
    await until(async () => (await browserState()).viewer === null, "the last viewer to go");
  });

  it("skips the frames a stalled viewer could not take: on reading again it gets a frame made then, not a backlog", async () => {
    const controller = new AbortController();
    leftovers.push(() => controller.abort());
    const frames = frameReader(await call("/threads/t1/browser/live", { signal: controller.signal }));
    await frames.next();
    const stallMs = 30 * FRAME_INTERVAL_MS;
    await new Promise((r) => setTimeout(r, stallMs));
    const resumed = Date.now();
    // What the sockets already held when the viewer stopped reading comes first; then one made after it read again.
    const seen: FrameEvent[] = [];
    do seen.push(await frames.next());
    while ((seen.at(-1) as FrameEvent).at < resumed);
    const fresh = seen.at(-1) as FrameEvent;
    const held = seen.at(-2);
    const times = JSON.stringify(seen.map((f) => ({ seq: f.seq, at: f.at - resumed })));
    // No frame was made for the periods the viewer could not take them: a gap of most of the stall, not a queue.
    expect(held === undefined || fresh.at - held.at > stallMs / 2, times).toBe(true);
    controller.abort();
    await frames.stop();
    await until(async () => (await browserState()).viewer === null, "the viewer to go");
  });
});
