import { createHash, randomUUID } from "node:crypto";
import { isAntlerError, type Logger } from "@antler/kernel";
import { defineGatewayRoute, type GatewayReply, type GatewayRequest, type GatewayRoute } from "@antler/plugin-runtime/routes";
import { z } from "zod";
import type { BrowserConfig } from "./config.js";
import type { SessionScope } from "./session.js";
import type { BrowserSessionManager } from "./session-manager.js";

/** Stable codes of the live view's HTTP errors. */
export const LiveViewErrorCodes = {
  /** Another live viewer holds the thread's session. */
  VIEWER_BUSY: "ANTLER_ERR_BROWSER_VIEWER_BUSY",
  /** Input from a client that does not hold the live view (or with no live view open). */
  NOT_VIEWER: "ANTLER_ERR_BROWSER_NOT_VIEWER",
  /** Input for a thread that has no browser session right now. */
  NO_SESSION: "ANTLER_ERR_BROWSER_NO_SESSION",
  /** The input could not be dispatched (the page went away, a key name Chromium does not know). */
  INPUT_FAILED: "ANTLER_ERR_BROWSER_INPUT_FAILED",
} as const;

export type LiveViewConfig = BrowserConfig["live"];

interface Viewer {
  readonly id: string;
  readonly userId: string;
  readonly client: string;
  readonly since: string;
  /** Starts the fast refresh window after an input. */
  kick(): void;
}

const inputSchema = z.discriminatedUnion("action", [
  z.strictObject({ viewer_id: z.string().min(1), action: z.literal("move"), x: z.number().min(0), y: z.number().min(0) }),
  z.strictObject({
    viewer_id: z.string().min(1),
    action: z.literal("click"),
    x: z.number().min(0),
    y: z.number().min(0),
    button: z.enum(["left", "right", "middle"]).default("left"),
    click_count: z.number().int().min(1).max(3).default(1),
  }),
  z.strictObject({
    viewer_id: z.string().min(1),
    action: z.literal("scroll"),
    x: z.number().min(0).optional(),
    y: z.number().min(0).optional(),
    delta_x: z.number().min(-10_000).max(10_000).default(0),
    delta_y: z.number().min(-10_000).max(10_000).default(0),
  }),
  z.strictObject({ viewer_id: z.string().min(1), action: z.literal("type"), text: z.string().min(1).max(2000) }),
  z.strictObject({
    viewer_id: z.string().min(1),
    action: z.literal("key"),
    // Playwright key names and chords: "Enter", "ArrowDown", "Control+A".
    key: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9+]+$|^.$/, "a key name such as Enter, ArrowDown or Control+A, or one character"),
  }),
]);
export type LiveInput = z.infer<typeof inputSchema>;

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The body of an event stream that is pulled, never pushed: the next event is made only once the connection has
 * taken the last (the server stops reading a body while the socket's `write()` is backed up, until `drain`). A
 * viewer that reads slowly or not at all holds at most one event here, and on reading again gets an event made
 * then; the frames it could not take were never captured, so memory stays flat however long it stalls.
 * `end` runs once the source is done or failed, or the client went away.
 */
function pulledEventStream(source: AsyncGenerator<string>, end: (error?: unknown) => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const close = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    try {
      controller.close();
    } catch {
      // already cancelled by the client
    }
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let next: IteratorResult<string>;
        try {
          next = await source.next();
        } catch (error) {
          end(error);
          return close(controller);
        }
        if (next.done) {
          end();
          return close(controller);
        }
        try {
          controller.enqueue(encoder.encode(next.value));
        } catch {
          // cancelled while the event was being made
        }
      },
      cancel() {
        end();
        // The source ends at its next step; nothing refers to it after that.
        void source.return(undefined).catch(() => undefined);
      },
    },
    // Nothing is made ahead of a read.
    { highWaterMark: 0 },
  );
}

function problem(status: number, code: string, message: string, extra: Record<string, unknown> = {}): GatewayReply {
  return { status, body: { error: { code, message, ...extra } } };
}

/**
 * The browser's REST and live surface for the console, mounted by the gateway under `/api/threads/:id/browser`:
 *
 * - `GET  .../browser`: the session's state (open, URL, title, viewport, whether a live viewer holds it).
 * - `GET  .../browser/live`: Server-Sent Events. The first event, `viewer`, carries the id that input must
 *   name; then `frame` events (JPEG, base64) and `state` events. One viewer per session: a second gets 409
 *   naming who holds it. While viewed, the session is pinned, so `max_sessions` never evicts it.
 * - `POST .../browser/input`: a click, move, scroll, text or key from the viewer, dispatched at once. It never
 *   waits for a frame: capture runs on its own loop, and a non-move input only opens a short fast-refresh window.
 *
 * Only the thread's owner reaches any of them: the thread must exist under the caller's own user id (another
 * user's thread is a 404, like a missing one), and sessions are keyed by that user and thread.
 */
export function browserLiveRoutes(manager: BrowserSessionManager, config: LiveViewConfig, logger?: Logger): GatewayRoute[] {
  const viewers = new Map<string, Viewer>();
  const keyOf = (scope: SessionScope) => `${scope.userId}\n${scope.threadId}`;

  /** The caller's own thread, or a 404 reply. */
  async function ownScope(request: GatewayRequest): Promise<SessionScope | GatewayReply> {
    const threadId = request.params.id ?? "";
    try {
      await request.client.getThreadRecord(threadId, { userId: request.userId });
    } catch (error) {
      if (isAntlerError(error)) return problem(404, error.code, `thread ${JSON.stringify(threadId)} was not found`);
      throw error;
    }
    return { userId: request.userId, threadId };
  }

  function state(scope: SessionScope) {
    const session = manager.get(scope);
    const open = session !== undefined && !session.closed && !session.page.isClosed();
    const viewer = viewers.get(keyOf(scope));
    return {
      thread_id: scope.threadId,
      open,
      url: open ? session.page.url() : null,
      viewport: open ? session.page.viewportSize() : null,
      pinned: manager.isPinned(scope),
      viewer: viewer ? { client: viewer.client, since: viewer.since } : null,
    };
  }

  function live(scope: SessionScope, request: GatewayRequest): GatewayReply {
    const key = keyOf(scope);
    const holder = viewers.get(key);
    if (holder) {
      return problem(
        409,
        LiveViewErrorCodes.VIEWER_BUSY,
        "another live viewer holds this browser session; close it there (or wait for it to disconnect) and try again",
        { held_by: { user_id: holder.userId, client: holder.client, since: holder.since } },
      );
    }
    let wake: (() => void) | undefined;
    let activeUntil = 0;
    let stopped = false;
    const viewer: Viewer = {
      id: randomUUID(),
      userId: scope.userId,
      client: (request.request.headers.get("user-agent") ?? "unknown client").slice(0, 200),
      since: new Date().toISOString(),
      kick() {
        activeUntil = Date.now() + config.active_window_ms;
        wake?.();
      },
    };
    viewers.set(key, viewer);
    const unpin = manager.pin(scope);
    const release = () => {
      if (stopped) return;
      stopped = true;
      wake?.();
      unpin();
      if (viewers.get(key) === viewer) viewers.delete(key);
    };
    request.signal.addEventListener("abort", release, { once: true });

    /** Waits out the frame period (cut short by an input's kick or by the viewer leaving). */
    const nextTick = () =>
      new Promise<void>((resolve) => {
        const delay = Date.now() < activeUntil ? config.active_frame_interval_ms : config.frame_interval_ms;
        const timer = setTimeout(resolve, delay);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      }).finally(() => {
        wake = undefined;
      });

    async function* events(): AsyncGenerator<string> {
      yield sse("viewer", { viewer_id: viewer.id, thread_id: scope.threadId });
      let lastState = "";
      let lastFrame = "";
      let seq = 0;
      while (!stopped) {
        const current = state(scope);
        const stateKey = JSON.stringify([current.open, current.url]);
        if (stateKey !== lastState) {
          lastState = stateKey;
          yield sse("state", current);
        }
        const session = manager.get(scope);
        if (current.open && session) {
          // Capture runs beside the session's action queue, never in it: a long agent action does not freeze
          // the view, and input never waits for a capture.
          const jpeg = await session.page
            .screenshot({ type: "jpeg", quality: config.jpeg_quality, timeout: 5000, caret: "initial" })
            .catch(() => undefined);
          if (jpeg && !stopped) {
            const digest = createHash("sha1").update(jpeg).digest("hex");
            if (digest !== lastFrame) {
              lastFrame = digest;
              yield sse("frame", {
                seq: ++seq,
                mime: "image/jpeg",
                data: jpeg.toString("base64"),
                url: session.page.url(),
                at: Date.now(),
              });
            }
          }
        } else {
          yield ": waiting for a browser session\n\n";
        }
        if (!stopped) await nextTick();
      }
    }

    const body = pulledEventStream(events(), (error) => {
      if (error !== undefined && !stopped) logger?.warn({ err: error, thread_id: scope.threadId }, "browser live view stopped");
      release();
    });
    return new Response(body, {
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" },
    });
  }

  async function input(scope: SessionScope, event: LiveInput): Promise<GatewayReply> {
    const viewer = viewers.get(keyOf(scope));
    if (!viewer || viewer.id !== event.viewer_id) {
      return problem(
        409,
        LiveViewErrorCodes.NOT_VIEWER,
        "only the client holding this session's live view may drive it; open the live view first",
      );
    }
    const session = manager.get(scope);
    if (!session || session.closed || session.page.isClosed()) {
      return problem(
        404,
        LiveViewErrorCodes.NO_SESSION,
        "this thread has no browser session right now; it opens with the agent's first browser call",
      );
    }
    const page = session.page;
    session.lastUsedAt = Date.now();
    try {
      switch (event.action) {
        case "move":
          await page.mouse.move(event.x, event.y);
          break;
        case "click":
          await page.mouse.click(event.x, event.y, { button: event.button, clickCount: event.click_count });
          break;
        case "scroll":
          if (event.x !== undefined && event.y !== undefined) await page.mouse.move(event.x, event.y);
          await page.mouse.wheel(event.delta_x, event.delta_y);
          break;
        case "type":
          await page.keyboard.type(event.text);
          break;
        case "key":
          await page.keyboard.press(event.key);
          break;
      }
    } catch (error) {
      return problem(
        422,
        LiveViewErrorCodes.INPUT_FAILED,
        `the ${event.action} could not be dispatched: ${(error as Error).message.split("\n")[0]}`,
      );
    }
    // Pointer moves are continuous and cheap; everything else shows its effect in the next few frames.
    if (event.action !== "move") viewer.kick();
    return { status: 202, body: { accepted: true, action: event.action } };
  }

  const withScope =
    (fn: (scope: SessionScope, request: GatewayRequest) => GatewayReply | Promise<GatewayReply>) => async (request: GatewayRequest) => {
      const scope = await ownScope(request);
      return "threadId" in scope ? fn(scope, request) : scope;
    };

  return [
    defineGatewayRoute({
      method: "GET",
      path: "/threads/:id/browser",
      summary: "The thread's browser session: open, URL, viewport, and whether a live viewer holds it.",
      handler: withScope((scope) => ({ body: state(scope) })),
    }),
    defineGatewayRoute({
      method: "GET",
      path: "/threads/:id/browser/live",
      summary: "Live view of the thread's browser (Server-Sent Events of JPEG frames); one viewer at a time.",
      handler: withScope((scope, request) => live(scope, request)),
    }),
    defineGatewayRoute({
      method: "POST",
      path: "/threads/:id/browser/input",
      summary: "Click, move, scroll, type or press a key in the live-viewed browser (the viewer's id is required).",
      body: inputSchema,
      handler: withScope((scope, request) => input(scope, request.body as LiveInput)),
    }),
  ];
}
