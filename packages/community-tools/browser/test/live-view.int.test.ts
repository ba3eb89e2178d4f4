import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeWithChromium, type ScriptFunction, scriptedModelsPlugin } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { afterEach, expect, it } from "vitest";
import { type BrowserSessionManager, createBrowserPlugin, LiveViewErrorCodes } from "../src/index.js";
import { html, startSite } from "./fixtures.js";

const ALICE = "alice-key-0123456789abcdef";
const BOB = "bob-key-0123456789abcdef00";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Reads Server-Sent Events from a fetch response, one at a time. */
function sseReader(response: Response): { next(): Promise<SseEvent>; close(): Promise<void> } {
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
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) return { event, data: JSON.parse(data) as Record<string, unknown> };
          continue; // a comment (keep-alive)
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("the live stream ended");
        buffer += decoder.decode(value, { stream: true });
      }
    },
    close: () => reader.cancel(),
  };
}

/** Polls an async condition until it holds (20 s at most). */
async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function nextOf(stream: ReturnType<typeof sseReader>, event: string): Promise<SseEvent> {
  for (;;) {
    const next = await stream.next();
    if (next.event === event) return next;
  }
}

describeWithChromium("browser live view over a real gateway", (executablePath) => {
  async function setUp() {
    const site = await startSite({
      "/": html(
        `<button id="big" style="position:absolute;left:0;top:0;width:400px;height:300px;font-size:40px"
           onclick="document.body.dataset.clicked='yes'; this.textContent='Clicked'; fetch('/clicked')">Click me</button>`,
        "Live test",
      ),
      "/clicked": (_req, res) => res.writeHead(204).end(),
      "/other": html("<p>Other thread</p>", "Other"),
    });
    cleanups.push(() => site.close());
    const cwd = mkdtempSync(join(tmpdir(), "antler-browser-live-"));
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
    // Each turn opens the page named in the user's message, then answers.
    const browse: ScriptFunction = (messages) => {
      const last = messages.at(-1);
      if (last?.getType() === "tool") return { text: "opened" };
      return { toolCalls: [{ name: "browser_navigate", args: { url: `${site.origin}${String(last?.content)}` } }] };
    };
    let manager: BrowserSessionManager | undefined;
    const client = await AntlerClient.create({
      config: {
        models: [{ name: "m", provider: "scripted" }],
        storage: { backend: "memory" },
        title: { enabled: false },
        logging: { level: "warn" },
      },
      plugins: [
        scriptedModelsPlugin({ m: browse }),
        {
          plugin: createBrowserPlugin({ onManager: (m) => (manager = m) }),
          config: { executable_path: executablePath, allow_private_addresses: true, max_sessions: 1, live: { frame_interval_ms: 150 } },
        },
      ],
      cwd,
      env: {},
      discover: false,
    });
    const gateway: RunningGateway = await startGateway({
      client,
      config: {
        port: 0,
        auth: {
          mode: "api_keys",
          api_keys: [
            { key: ALICE, user: "alice" },
            { key: BOB, user: "bob" },
          ],
        },
      },
      shutdownGraceMs: 500,
    });
    cleanups.push(async () => {
      await gateway.close();
      await client.close();
    });
    const call = (path: string, init: { key?: string; json?: unknown; signal?: AbortSignal } = {}) =>
      fetch(`${gateway.url}/api${path}`, {
        method: init.json === undefined ? "GET" : "POST",
        headers: {
          authorization: `Bearer ${init.key ?? ALICE}`,
          "user-agent": "live-view-test",
          ...(init.json === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
        ...(init.signal ? { signal: init.signal } : {}),
      });
    return { site, call, manager: () => manager as BrowserSessionManager };
  }

  it("streams frames to the thread's owner, dispatches a click into the page, refuses a second viewer and hides it from another user", async () => {
    const { site, call, manager } = await setUp();
    await call("/threads", { json: { thread_id: "t1" } });
    expect((await call("/threads/t1/runs/wait", { json: { message: "/" } })).status).toBe(200);

    const state = (await (await call("/threads/t1/browser")).json()) as Record<string, unknown>;
    expect(state).toMatchObject({ thread_id: "t1", open: true, url: `${site.origin}/`, viewer: null });

    const controller = new AbortController();
    const response = await call("/threads/t1/browser/live", { signal: controller.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const live = sseReader(response);
    const viewerId = String((await nextOf(live, "viewer")).data.viewer_id);
    const frame = await nextOf(live, "frame");
    expect(frame.data.mime).toBe("image/jpeg");
    expect(Buffer.from(String(frame.data.data), "base64").subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));

    // A second viewer (another tab of the same user) is refused and told who holds the session.
    const second = await call("/threads/t1/browser/live");
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: Record<string, unknown> }).error).toMatchObject({
      code: LiveViewErrorCodes.VIEWER_BUSY,
      held_by: { user_id: "alice", client: "live-view-test" },
    });
    // Input must name the viewer that holds the view.
    const forged = await call("/threads/t1/browser/input", { json: { viewer_id: "not-the-viewer", action: "click", x: 100, y: 100 } });
    expect(forged.status).toBe(409);

    // Another user: the thread does not exist for them, on every route.
    for (const [path, json] of [
      ["/threads/t1/browser", undefined],
      ["/threads/t1/browser/live", undefined],
      ["/threads/t1/browser/input", { viewer_id: viewerId, action: "click", x: 100, y: 100 }],
    ] as const) {
      expect((await call(path, { key: BOB, ...(json ? { json } : {}) })).status, path).toBe(404);
    }

    // The owner's click reaches the page: its DOM changes, and the page's own request reaches the site.
    const click = await call("/threads/t1/browser/input", { json: { viewer_id: viewerId, action: "click", x: 100, y: 100 } });
    expect(click.status).toBe(202);
    const page = manager().get({ userId: "alice", threadId: "t1" })?.page;
    await until(async () => (await page?.evaluate("document.body.dataset.clicked")) === "yes", "the click to change the DOM");
    await until(() => site.hits.some((h) => h.path === "/clicked"), "the page's request after the click");
    // ... and shows in a later frame (the button's text changed, so the picture did).
    const after = await nextOf(live, "frame");
    expect(after.data.data).not.toBe(frame.data.data);

    const typed = await call("/threads/t1/browser/input", { json: { viewer_id: viewerId, action: "key", key: "Tab" } });
    expect(typed.status).toBe(202);
    const bad = await call("/threads/t1/browser/input", { json: { viewer_id: viewerId, action: "teleport" } });
    expect(bad.status).toBe(400);

    // Once the viewer disconnects, the session is free for a new one.
    controller.abort();
    await live.close().catch(() => {});
    await until(
      async () => ((await (await call("/threads/t1/browser")).json()) as Record<string, unknown>).viewer === null,
      "the viewer to go",
    );
    const again = await call("/threads/t1/browser/live");
    expect(again.status).toBe(200);
    await again.body?.cancel();
  });

  it("pins a viewed session: max_sessions never evicts it while the live view is open, and does once it closes", async () => {
    const { call } = await setUp();
    await call("/threads", { json: { thread_id: "viewed" } });
    await call("/threads", { json: { thread_id: "other" } });
    expect((await call("/threads/viewed/runs/wait", { json: { message: "/" } })).status).toBe(200);

    const controller = new AbortController();
    const live = sseReader(await call("/threads/viewed/browser/live", { signal: controller.signal }));
    await nextOf(live, "frame");
    expect(((await (await call("/threads/viewed/browser")).json()) as Record<string, unknown>).pinned).toBe(true);

    // max_sessions is 1 and the only session is being viewed: the other thread's browser call is refused.
    const refused = (await (await call("/threads/other/runs/wait", { json: { message: "/other" } })).json()) as unknown;
    expect(JSON.stringify(refused)).toContain("No browser session is available");
    expect(((await (await call("/threads/viewed/browser")).json()) as Record<string, unknown>).open).toBe(true);

    controller.abort();
    await live.close().catch(() => {});
    await until(
      async () => ((await (await call("/threads/viewed/browser")).json()) as Record<string, unknown>).pinned === false,
      "the unpin",
    );
    await call("/threads/other/runs/wait", { json: { message: "/other" } });
    expect(((await (await call("/threads/other/browser")).json()) as Record<string, unknown>).open).toBe(true);
    expect(((await (await call("/threads/viewed/browser")).json()) as Record<string, unknown>).open).toBe(false);
  });
});
