import type { UrlCheck, UrlCheckOptions } from "@antler/tools-web";
import type { APIResponse, BrowserContext, Frame, Request, Route } from "playwright-core";

/** The URL check the guard applies; `validatePublicHttpUrl` of `@antler/tools-web` unless a host replaces it. */
export type CheckUrl = (url: string, options: UrlCheckOptions) => Promise<UrlCheck>;

/** A request the guard refused. */
export interface BlockedRequest {
  readonly url: string;
  readonly reason: string;
  /** Playwright resource type (`document`, `image`, `script`, ...), or `websocket`. */
  readonly kind: string;
  /** For a blocked iframe document: the frame that stays empty, so the snapshot can say why. */
  readonly frame?: Frame;
}

export interface RequestGuardOptions {
  readonly checkUrl: CheckUrl;
  readonly allowPrivateAddresses: boolean;
  readonly timeoutMs: number;
  /** Redirect hops followed for one sub-resource before giving up. Default 10. */
  readonly maxRedirects?: number;
  onBlocked(entry: BlockedRequest): void;
  /** A navigation of a page's main frame answered with a redirect to an allowed target: navigate there anew. */
  onMainFrameRedirect(target: string, frame: Frame): void;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Never network: the browser handles these itself, and Chromium does not route them anyway. */
const LOCAL_SCHEMES = new Set(["data:", "blob:", "about:"]);
/**
 * Resource types the guard does not fetch: audio and video are streamed in ranges and can be huge, and the guard
 * would have to buffer them whole. An agent reads pages; it does not watch videos.
 */
const UNFETCHED_TYPES = new Set(["media"]);
/** Headers Playwright's fetch sets itself (the cookie jar is the context's). */
const DROPPED_HEADERS = new Set(["host", "cookie", "content-length", "connection"]);

function schemeOf(url: string): string {
  const colon = url.indexOf(":");
  return colon < 0 ? "" : url.slice(0, colon + 1).toLowerCase();
}

/** The frame whose top-level navigation this is, or undefined for sub-resources, iframes and workers. */
function mainFrameOf(request: Request): Frame | undefined {
  if (!request.isNavigationRequest()) return undefined;
  try {
    const frame = request.frame();
    return frame.parentFrame() === null ? frame : undefined;
  } catch {
    // service-worker requests have no frame
    return undefined;
  }
}

/** The child frame whose document this request is, or undefined for everything else. */
function childFrameOf(request: Request): Frame | undefined {
  if (!request.isNavigationRequest()) return undefined;
  try {
    const frame = request.frame();
    return frame.parentFrame() === null ? undefined : frame;
  } catch {
    return undefined;
  }
}

/** A blocked request as `onBlocked` reports it. */
function blockedEntry(request: Request, url: string, reason: string): BlockedRequest {
  const frame = childFrameOf(request);
  return { url, reason, kind: request.resourceType(), ...(frame ? { frame } : {}) };
}

async function abortQuietly(route: Route, code: string): Promise<void> {
  // The page or context may be gone by the time a check finishes.
  await route.abort(code).catch(() => {});
}

/**
 * Screens every request of a browser context with the SSRF guard. Playwright hands the route only the first
 * URL of a request and lets the browser follow redirects unseen, so the guard fetches each request itself
 * without following redirects and checks every `Location` before anything is sent there: a main-frame
 * navigation is aborted and reported through `onMainFrameRedirect` (the session navigates to the target, which
 * is routed again), and a sub-resource or iframe is followed hop by hop here. WebSockets are checked before
 * they connect.
 */
export async function installRequestGuard(context: BrowserContext, options: RequestGuardOptions): Promise<void> {
  const maxRedirects = options.maxRedirects ?? 10;
  const check = async (url: string): Promise<UrlCheck> => {
    try {
      return await options.checkUrl(url, { allowPrivateAddresses: options.allowPrivateAddresses });
    } catch (err) {
      return { ok: false, reason: `the URL check failed: ${(err as Error)?.message ?? String(err)}` };
    }
  };

  await context.route("**/*", async (route, request) => {
    const url = request.url();
    const scheme = schemeOf(url);
    if (LOCAL_SCHEMES.has(scheme)) {
      await route.continue().catch(() => {});
      return;
    }
    if (UNFETCHED_TYPES.has(request.resourceType())) {
      await abortQuietly(route, "blockedbyclient");
      return;
    }
    const first = await check(url);
    if (!first.ok) {
      options.onBlocked(blockedEntry(request, url, first.reason));
      await abortQuietly(route, "blockedbyclient");
      return;
    }
    let response: APIResponse;
    try {
      response = await route.fetch({ maxRedirects: 0, timeout: options.timeoutMs });
    } catch {
      await abortQuietly(route, "failed");
      return;
    }
    let current = url;
    for (let hop = 0; REDIRECT_STATUSES.has(response.status()); hop++) {
      const status = response.status();
      const location = response.headers().location;
      if (!location) break;
      let target: string;
      try {
        target = new URL(location, current).href;
      } catch {
        break; // an unusable Location: hand the 3xx to the browser, which shows it as is
      }
      await response.dispose().catch(() => {});
      const verdict = await check(target);
      if (!verdict.ok) {
        options.onBlocked(blockedEntry(request, target, `redirect from ${current}: ${verdict.reason}`));
        await abortQuietly(route, "blockedbyclient");
        return;
      }
      const mainFrame = mainFrameOf(request);
      if (mainFrame) {
        options.onMainFrameRedirect(target, mainFrame);
        await abortQuietly(route, "aborted");
        return;
      }
      if (hop >= maxRedirects) {
        options.onBlocked(blockedEntry(request, target, `more than ${maxRedirects} redirects from ${url}`));
        await abortQuietly(route, "failed");
        return;
      }
      const keepMethod = status === 307 || status === 308;
      const headers = Object.fromEntries(Object.entries(request.headers()).filter(([name]) => !DROPPED_HEADERS.has(name.toLowerCase())));
      try {
        response = await context.request.fetch(target, {
          method: keepMethod ? request.method() : "GET",
          headers,
          ...(keepMethod && request.postDataBuffer() ? { data: request.postDataBuffer() as Buffer } : {}),
          maxRedirects: 0,
          timeout: options.timeoutMs,
        });
      } catch {
        await abortQuietly(route, "failed");
        return;
      }
      current = target;
    }
    await route.fulfill({ response }).catch(() => {});
  });

  await context.routeWebSocket(
    () => true,
    async (ws) => {
      const url = ws.url();
      const verdict = await check(url.replace(/^ws(s?):/i, "http$1:"));
      if (!verdict.ok) {
        options.onBlocked({ url, reason: verdict.reason, kind: "websocket" });
        await ws.close({ code: 1008, reason: "blocked by the SSRF guard" }).catch(() => {});
        return;
      }
      ws.connectToServer();
    },
  );
}
