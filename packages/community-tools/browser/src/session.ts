import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { neutralizeFrameworkTags } from "@antler/tools-web/sanitize";
import type { Browser, BrowserContext, Frame, Locator, Page, Request } from "playwright-core";
import { BrowserError, BrowserErrorCodes } from "./errors.js";
import { type ElementRef, FrameRefs, parseElementRef } from "./frame-refs.js";
import { type BlockedRequest, type CheckUrl, installRequestGuard } from "./guard.js";
import {
  FRAME_SLOT_ATTRIBUTE,
  type FrameSlot,
  type FrameSnapshot,
  formatSnapshot,
  type PageSnapshot,
  REF_ATTRIBUTE,
  snapshotExpression,
} from "./snapshot.js";

/** The (user, thread) a session belongs to. */
export interface SessionScope {
  readonly userId: string;
  readonly threadId: string;
}

export interface SessionOptions {
  readonly checkUrl: CheckUrl;
  readonly allowPrivateAddresses: boolean;
  readonly navigationTimeoutMs: number;
  readonly actionTimeoutMs: number;
  readonly snapshotMaxChars: number;
  readonly textMaxChars: number;
  readonly viewport: { width: number; height: number };
  readonly userAgent?: string | undefined;
}

const MAX_BLOCKED_KEPT = 20;
const MAX_NAVIGATION_REDIRECTS = 10;
/**
 * How long an action that may navigate (a click, Enter) waits for a navigation or popup to start before the
 * page counts as unchanged. Navigations normally start within a few milliseconds; the margin is for busy hosts.
 */
const ACTION_EFFECT_GRACE_MS = 400;
/** Frames inside frames are read this many levels deep; deeper ones are named but not read. */
export const MAX_FRAME_DEPTH = 3;
/** Frames read for one snapshot; further ones are named but not read. */
export const MAX_SNAPSHOT_FRAMES = 30;
/** Interactive elements listed in one snapshot, over all its frames. */
export const MAX_SNAPSHOT_REFS = 1000;
/** A snapshot line that lists an element: `[12] ...` or, indented, `[f2e12] ...`. */
const REF_LINE = /^\s*\[(?:f\d+e)?\d+\] /;

interface SnapshotBudget {
  frames: number;
  refsLeft: number;
  truncated: boolean;
  refCapped: boolean;
}

function clipUrl(url: string): string {
  return url.length > 200 ? `${url.slice(0, 199)}…` : url;
}

function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (message.split("\n")[0] ?? message).replace(/^[a-zA-Z.]+: /, "");
}

/**
 * One thread's browser: a context (cookies, storage) and its current page. Actions run one at a time, so
 * parallel tool calls of one step cannot interleave on the page.
 */
/** What `BrowserSession.capture` and `BrowserSessionManager.capture` return. */
export interface PageCapture {
  png: Buffer;
  title: string;
  /** The URL the page ended on, after redirects. */
  url: string;
}

export class BrowserSession {
  readonly key: string;
  readonly scope: SessionScope;
  readonly createdAt = Date.now();
  lastUsedAt = Date.now();
  private pageRef: Page;
  private nextRef = 1;
  /** Snapshots taken, to tell this snapshot's frame slots from stale ones left on the page by earlier ones. */
  private snapshots = 0;
  private blocked: BlockedRequest[] = [];
  private blockedOmitted = 0;
  /** Child frames whose document the guard refused, until they navigate elsewhere. */
  private readonly blockedFrames = new WeakMap<Frame, { url: string; reason: string }>();
  private readonly frameRefs = new FrameRefs();
  /** A top-level redirect the guard stopped, to be followed as a new navigation of that page. */
  private pendingRedirect: { page: Page; target: string } | undefined;
  private readonly navigations = new Set<Request>();
  private queue: Promise<unknown> = Promise.resolve();
  private closedFlag = false;
  private screenshots = 0;

  private constructor(
    key: string,
    scope: SessionScope,
    readonly context: BrowserContext,
    page: Page,
    private readonly options: SessionOptions,
  ) {
    this.key = key;
    this.scope = scope;
    this.pageRef = page;
  }

  /** Opens a guarded context and its first page. The guard is installed before any page exists. */
  static async open(browser: Browser, key: string, scope: SessionScope, options: SessionOptions): Promise<BrowserSession> {
    const context = await browser.newContext({
      viewport: options.viewport,
      ...(options.userAgent ? { userAgent: options.userAgent } : {}),
      acceptDownloads: false,
      // Service workers fetch outside the context's routes.
      serviceWorkers: "block",
    });
    let session: BrowserSession | undefined;
    try {
      await installRequestGuard(context, {
        checkUrl: options.checkUrl,
        allowPrivateAddresses: options.allowPrivateAddresses,
        timeoutMs: options.navigationTimeoutMs,
        onBlocked: (entry) => session?.recordBlocked(entry),
        onMainFrameRedirect: (target, frame) => {
          if (session) session.pendingRedirect = { page: frame.page(), target };
        },
      });
      context.setDefaultTimeout(options.actionTimeoutMs);
      context.setDefaultNavigationTimeout(options.navigationTimeoutMs);
      const page = await context.newPage();
      session = new BrowserSession(key, scope, context, page, options);
      session.watch(page);
      context.on("page", (popup) => session?.adopt(popup));
      return session;
    } catch (err) {
      await context.close().catch(() => {});
      throw err;
    }
  }

  get page(): Page {
    return this.pageRef;
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  /** Runs `fn` after every earlier action of this session has finished. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.queue.then(() => {
      if (this.closedFlag)
        throw new BrowserError(BrowserErrorCodes.CLOSED, "This browser session was closed. Call browser_navigate to start a new one.");
      this.lastUsedAt = Date.now();
      return fn();
    });
    this.queue = result.catch(() => {});
    return result;
  }

  async close(): Promise<void> {
    if (this.closedFlag) return;
    this.closedFlag = true;
    await this.context.close().catch(() => {});
  }

  private recordBlocked(entry: BlockedRequest): void {
    if (entry.frame) this.blockedFrames.set(entry.frame, { url: entry.url, reason: entry.reason });
    if (this.blocked.length >= MAX_BLOCKED_KEPT) this.blockedOmitted++;
    else this.blocked.push(entry);
  }

  private watch(page: Page): void {
    page.on("request", (request) => {
      if (request.isNavigationRequest()) this.navigations.add(request);
    });
    this.frameRefs.watch(page);
    page.on("framenavigated", (frame) => {
      // A blocked frame shows Chromium's error page; a frame that then loads something else is no longer blocked.
      const blocked = this.blockedFrames.get(frame);
      const url = frame.url();
      if (blocked && url !== blocked.url && url !== "about:blank" && !url.startsWith("chrome-error:")) this.blockedFrames.delete(frame);
    });
    const done = (request: Request) => this.navigations.delete(request);
    page.on("requestfinished", done);
    page.on("requestfailed", done);
    page.on("close", () => {
      if (this.pageRef !== page) return;
      const open = this.context.pages().filter((p) => !p.isClosed());
      const last = open.at(-1);
      if (last) this.pageRef = last;
    });
  }

  /** A popup or `target=_blank` page becomes the current page: that is where the user's click went. */
  private adopt(page: Page): void {
    if (this.closedFlag || page === this.pageRef) return;
    this.watch(page);
    this.pageRef = page;
  }

  /** The page, reopened if the model (or the site) closed the last one. */
  private async currentPage(): Promise<Page> {
    if (this.pageRef.isClosed()) {
      const page = await this.context.newPage();
      this.watch(page);
      this.pageRef = page;
    }
    return this.pageRef;
  }

  /** Waits until the action visibly started something (a navigation, a guarded redirect, `extra`), or the grace ends. */
  private async awaitEffects(extra: () => boolean = () => false, frame?: Frame): Promise<void> {
    const started = () => extra() || this.pendingRedirect !== undefined || this.navigating(frame);
    for (let waited = 0; !started() && waited < ACTION_EFFECT_GRACE_MS; waited += 20) await sleep(20);
  }

  /**
   * Whether a top-level navigation of an open page, or one of `frame`, is still loading. Requests of closed
   * pages and removed frames are dropped; those of other frames (ads, widgets) are not waited for.
   */
  private navigating(frame?: Frame): boolean {
    let busy = false;
    for (const request of this.navigations) {
      let target: Frame | undefined;
      try {
        target = request.frame();
      } catch {
        // no frame any more
      }
      if (!target || target.isDetached() || target.page().isClosed()) {
        this.navigations.delete(request);
        continue;
      }
      if (target.parentFrame() === null || target === frame) busy = true;
    }
    return busy;
  }

  /**
   * Notes whether `frame` (a child frame an action runs in) starts a navigation and when its new document
   * commits, so the action can wait for the frame's new content as it waits for the page's.
   */
  private followFrame(page: Page, frame: Frame): { started(): boolean; settled(): boolean; stop(): void } {
    let started = false;
    let committed = false;
    let failed = false;
    const isFrameNavigation = (request: Request) => {
      try {
        return request.isNavigationRequest() && request.frame() === frame;
      } catch {
        return false; // a service worker's request has no frame
      }
    };
    const onRequest = (request: Request) => {
      if (isFrameNavigation(request)) started = true;
    };
    const onFailed = (request: Request) => {
      if (isFrameNavigation(request)) failed = true;
    };
    const onNavigated = (navigated: Frame) => {
      if (navigated === frame) committed = true;
    };
    page.on("request", onRequest);
    page.on("requestfailed", onFailed);
    page.on("framenavigated", onNavigated);
    return {
      started: () => started,
      settled: () => !started || committed || failed || frame.isDetached(),
      stop: () => {
        page.off("request", onRequest);
        page.off("requestfailed", onFailed);
        page.off("framenavigated", onNavigated);
      },
    };
  }

  /** After an action inside a child frame: waits for the frame's navigation, if the action started one. */
  private async settleFrame(frame: Frame, follow: { settled(): boolean }): Promise<void> {
    const deadline = Date.now() + this.options.navigationTimeoutMs;
    while ((this.navigating(frame) || !follow.settled()) && Date.now() < deadline) await sleep(25);
    if (frame.isDetached()) return;
    const remaining = Math.max(1, Math.min(5_000, deadline - Date.now()));
    await frame.waitForLoadState("domcontentloaded", { timeout: remaining }).catch(() => {});
  }

  private guardReasonFor(url: string): string | undefined {
    return this.blocked.find((b) => b.url === url || b.reason.startsWith(`redirect from ${url}`))?.reason;
  }

  /**
   * Waits for the main frame to finish navigating after an action, following redirects the guard turned into
   * new navigations, then for the DOM to be ready.
   */
  private async settle(page: Page): Promise<void> {
    const deadline = Date.now() + this.options.navigationTimeoutMs;
    for (let hops = 0; ; ) {
      while (this.navigating() && Date.now() < deadline) await sleep(25);
      const pending = this.pendingRedirect;
      if (pending === undefined) break;
      this.pendingRedirect = undefined;
      if (pending.page.isClosed()) continue;
      if (++hops > MAX_NAVIGATION_REDIRECTS) {
        throw new BrowserError(
          BrowserErrorCodes.BLOCKED_URL,
          `The page redirected more than ${MAX_NAVIGATION_REDIRECTS} times; stopped at ${pending.target}.`,
        );
      }
      await this.goto(pending.page, pending.target, false);
    }
    const remaining = Math.max(1, Math.min(5_000, deadline - Date.now()));
    await page.waitForLoadState("domcontentloaded", { timeout: remaining }).catch(() => {});
  }

  private async goto(page: Page, url: string, settle = true): Promise<void> {
    try {
      await page.goto(url, { waitUntil: "domcontentloaded", timeout: this.options.navigationTimeoutMs });
    } catch (err) {
      if (this.pendingRedirect === undefined) {
        const reason = this.guardReasonFor(url);
        if (reason) throw new BrowserError(BrowserErrorCodes.BLOCKED_URL, `Navigation to ${url} was blocked by the SSRF guard: ${reason}.`);
        throw new Error(`Could not load ${url}: ${firstLine(err)}`);
      }
    }
    if (settle) await this.settle(page);
    // Give sub-resources a moment; a page that never reaches "load" is still usable.
    await page.waitForLoadState("load", { timeout: 3_000 }).catch(() => {});
  }

  /** Checks the URL with the guard first, so a refused URL never reaches the browser. */
  async navigate(url: string): Promise<void> {
    const trimmed = url.trim();
    // Models often write a bare host ("example.org/page"); https is what a person typing it would get.
    const absolute = /^[a-z][a-z0-9+.-]*:/i.test(trimmed) && !/^[^:/]+:\d+(\/|$)/.test(trimmed) ? trimmed : `https://${trimmed}`;
    const verdict = await this.options.checkUrl(absolute, { allowPrivateAddresses: this.options.allowPrivateAddresses });
    if (!verdict.ok) {
      throw new BrowserError(
        BrowserErrorCodes.BLOCKED_URL,
        `Navigation to ${trimmed} was refused by the SSRF guard: ${verdict.reason}. The browser opens only public http(s) sites.`,
      );
    }
    await this.goto(await this.currentPage(), verdict.url.href);
  }

  /**
   * The page as text: the main frame, with the content of each visible frame (iframe) spliced in where the
   * frame sits, under a `[frame f<id>] <url>` line and indented. Elements of a frame get refs `f<id>e<n>`.
   */
  async snapshot(note?: string): Promise<string> {
    const page = await this.currentPage();
    this.snapshots++;
    let main: FrameSnapshot;
    try {
      main = await this.readFrame(page.mainFrame(), "", MAX_SNAPSHOT_REFS);
    } catch (err) {
      // The page navigated while we read it: wait for it and read once more.
      await page.waitForLoadState("domcontentloaded").catch(() => {});
      try {
        main = await this.readFrame(page.mainFrame(), "", MAX_SNAPSHOT_REFS);
      } catch {
        throw new Error(`Could not read the page: ${firstLine(err)}`);
      }
    }
    const budget: SnapshotBudget = {
      frames: 0,
      refsLeft: MAX_SNAPSHOT_REFS - main.refCount,
      truncated: main.truncated,
      refCapped: main.refCapped,
    };
    const all: string[] = [];
    await this.spliceFrames(page.mainFrame(), main, 0, "", all, budget);
    // Each frame was read within snapshot_max_chars; the whole is cut to it here, in reading order.
    const lines: string[] = [];
    let used = 0;
    let truncated = budget.truncated;
    let elementLimit = budget.refCapped ? MAX_SNAPSHOT_REFS : undefined;
    for (const line of all) {
      if (used + line.length + 1 > this.options.snapshotMaxChars) {
        truncated = true;
        elementLimit = undefined;
        break;
      }
      lines.push(line);
      used += line.length + 1;
    }
    const snap: PageSnapshot = {
      title: main.title,
      url: main.url,
      lines,
      truncated,
      nextRef: this.nextRef,
      refCount: lines.filter((line) => REF_LINE.test(line)).length,
      ...(elementLimit !== undefined ? { elementLimit } : {}),
    };
    const blocked = this.blocked;
    const blockedOmitted = this.blockedOmitted;
    this.blocked = [];
    this.blockedOmitted = 0;
    // Page text is data: text shaped like the framework's own tags must not read as a turn or an instruction.
    return neutralizeFrameworkTags(formatSnapshot(snap, { blocked, blockedOmitted, ...(note ? { note } : {}) }));
  }

  /** Reads one frame's own document; refs continue the session's numbering. */
  private async readFrame(frame: Frame, refPrefix: string, maxRefs: number): Promise<FrameSnapshot> {
    const snap = (await frame.evaluate(
      snapshotExpression({
        startRef: this.nextRef,
        maxChars: this.options.snapshotMaxChars,
        maxRefs,
        refPrefix,
        slotPrefix: `${this.snapshots}-`,
      }),
    )) as FrameSnapshot;
    this.nextRef = Math.max(this.nextRef, snap.nextRef);
    return snap;
  }

  /** Appends `snap` (the snapshot of `frame`) to `out`, with each of its child frames where it sits. */
  private async spliceFrames(frame: Frame, snap: FrameSnapshot, depth: number, indent: string, out: string[], budget: SnapshotBudget) {
    const bySlot = new Map<string, Frame>();
    if (snap.frames.length > 0) {
      for (const child of frame.childFrames()) {
        const slot = await child
          .frameElement()
          .then(async (element) => {
            try {
              return await element.getAttribute(FRAME_SLOT_ATTRIBUTE);
            } finally {
              await element.dispose().catch(() => {});
            }
          })
          .catch(() => null);
        if (slot !== null && !bySlot.has(slot)) bySlot.set(slot, child);
      }
    }
    let next = 0;
    for (const slot of snap.frames) {
      for (; next < slot.at && next < snap.lines.length; next++) out.push(indent + snap.lines[next]);
      await this.spliceFrame(bySlot.get(slot.slot), slot, depth + 1, indent, out, budget);
    }
    for (; next < snap.lines.length; next++) out.push(indent + snap.lines[next]);
  }

  /** Appends one child frame: its header line and its content, or why its content is not shown. */
  private async spliceFrame(
    child: Frame | undefined,
    slot: FrameSlot,
    depth: number,
    indent: string,
    out: string[],
    budget: SnapshotBudget,
  ): Promise<void> {
    if (!child || child.isDetached()) {
      out.push(`${indent}[frame] ${clipUrl(slot.src || "(no address)")} (not loaded)`);
      return;
    }
    const blocked = this.blockedFrames.get(child);
    if (blocked) {
      out.push(`${indent}[frame] ${clipUrl(blocked.url)} (blocked by the SSRF guard: ${blocked.reason}; its content did not load)`);
      return;
    }
    const url = clipUrl(child.url());
    const src = clipUrl(slot.src || child.url());
    if (url.startsWith("chrome-error:")) {
      out.push(`${indent}[frame] ${src} (failed to load)`);
      return;
    }
    if (url === "about:blank" && slot.src !== "" && !slot.src.startsWith("about:")) {
      // The frame has not committed its document yet; an id now would go stale the moment it does.
      out.push(`${indent}[frame] ${src} (still loading; take a new snapshot to see its content)`);
      return;
    }
    if (depth > MAX_FRAME_DEPTH) {
      out.push(`${indent}[frame] ${url} (nested more than ${MAX_FRAME_DEPTH} frames deep; its content is not in this snapshot)`);
      return;
    }
    if (budget.frames >= MAX_SNAPSHOT_FRAMES) {
      out.push(`${indent}[frame] ${url} (the page has more than ${MAX_SNAPSHOT_FRAMES} frames; this one is not in this snapshot)`);
      return;
    }
    if (budget.refsLeft <= 0) {
      budget.truncated = true;
      budget.refCapped = true;
      out.push(`${indent}[frame] ${url} (not read: the snapshot already lists ${MAX_SNAPSHOT_REFS} elements)`);
      return;
    }
    budget.frames++;
    const id = this.frameRefs.idOf(child);
    out.push(`${indent}[frame f${id}] ${url}`);
    const inner = `${indent}  `;
    let snap: FrameSnapshot;
    try {
      snap = await this.readFrame(child, `f${id}e`, budget.refsLeft);
    } catch (err) {
      out.push(`${inner}(could not read this frame: ${firstLine(err)}; take a new snapshot)`);
      return;
    }
    budget.refsLeft -= snap.refCount;
    budget.truncated ||= snap.truncated;
    budget.refCapped ||= snap.refCapped;
    if (snap.lines.length === 0 && snap.frames.length === 0) out.push(`${inner}(empty)`);
    await this.spliceFrames(child, snap, depth, inner, out, budget);
  }

  /** The element a ref names, in the frame it belongs to; a STALE_REF error that says what to do otherwise. */
  private async locate(page: Page, ref: ElementRef): Promise<{ locator: Locator; frame: Frame; label: string }> {
    const parsed = parseElementRef(ref);
    const frame = this.frameRefs.resolve(parsed, page);
    const locator = frame.locator(`[${REF_ATTRIBUTE}="${parsed.element}"]`);
    const count = await locator.count().catch(() => 0);
    if (count !== 1) {
      const where = parsed.frameId === undefined ? "on the current page" : `in frame f${parsed.frameId}`;
      const what =
        count === 0
          ? parsed.frameId === undefined
            ? "not on the current page"
            : `not in frame f${parsed.frameId} any more`
          : `ambiguous ${where}`;
      throw new BrowserError(
        BrowserErrorCodes.STALE_REF,
        `Ref ${parsed.label} is ${what}: ${parsed.frameId === undefined ? "the page" : "the frame"} changed or navigated since the snapshot it came from. ` +
          "Take a new snapshot with browser_snapshot and use a ref from it.",
      );
    }
    return { locator, frame, label: parsed.label };
  }

  /**
   * Runs an action on the element `ref` names, then waits for what it caused: a popup (which becomes the
   * current page), a navigation of the page, or a navigation of the frame the element is in.
   */
  private async act(ref: ElementRef, action: (target: { locator: Locator; label: string }) => Promise<boolean>): Promise<void> {
    const page = await this.currentPage();
    const target = await this.locate(page, ref);
    const inChild = target.frame !== page.mainFrame();
    const follow = inChild ? this.followFrame(page, target.frame) : undefined;
    // An action may open a popup (target=_blank, window.open); it appears within a few milliseconds if at all.
    let opened: Page | undefined;
    const onPopup = (popup: Page) => {
      opened ??= popup;
    };
    page.on("popup", onPopup);
    try {
      const mayNavigate = await action(target);
      if (mayNavigate) await this.awaitEffects(() => opened !== undefined || (follow?.started() ?? false), target.frame);
      const popup = opened as Page | undefined;
      if (popup && !popup.isClosed()) {
        this.adopt(popup);
        await popup.waitForLoadState("domcontentloaded", { timeout: this.options.navigationTimeoutMs }).catch(() => {});
      }
      await this.settle(this.pageRef);
      if (follow && !opened) await this.settleFrame(target.frame, follow);
    } finally {
      page.off("popup", onPopup);
      follow?.stop();
    }
  }

  async click(ref: ElementRef): Promise<void> {
    await this.act(ref, async ({ locator, label }) => {
      try {
        await locator.click({ timeout: this.options.actionTimeoutMs });
      } catch (err) {
        throw new Error(`Could not click ${label}: ${firstLine(err)}. Take a new snapshot; the element may be hidden or covered.`);
      }
      return true;
    });
  }

  async type(ref: ElementRef, text: string, submit: boolean): Promise<void> {
    await this.act(ref, async ({ locator, label }) => {
      const kind = await locator.evaluate((el: { localName: string; type?: string }) => {
        if (el.localName === "select") return "select";
        const type = (el.type ?? "").toLowerCase();
        return el.localName === "input" && ["checkbox", "radio", "submit", "button", "reset", "image", "file"].includes(type)
          ? type
          : "text";
      });
      if (kind === "select") {
        const chosen = await locator.selectOption({ label: text }, { timeout: this.options.actionTimeoutMs }).catch(() => null);
        if (!chosen || chosen.length === 0) {
          const byValue = await locator.selectOption(text, { timeout: this.options.actionTimeoutMs }).catch(() => null);
          if (!byValue || byValue.length === 0)
            throw new Error(
              `${label} is a select without an option labelled ${JSON.stringify(text)}; use one of the options the snapshot lists.`,
            );
        }
      } else if (kind !== "text") {
        throw new BrowserError(
          BrowserErrorCodes.STALE_REF,
          `${label} is a ${kind} input, which takes no text; use browser_click on it instead.`,
        );
      } else {
        try {
          await locator.fill(text, { timeout: this.options.actionTimeoutMs });
        } catch (err) {
          throw new Error(`Could not type into ${label}: ${firstLine(err)}. It may not be a text field; take a new snapshot.`);
        }
      }
      if (!submit) return false;
      await locator.press("Enter", { timeout: this.options.actionTimeoutMs }).catch((err: unknown) => {
        throw new Error(`Typed into ${label} but pressing Enter failed: ${firstLine(err)}`);
      });
      return true;
    });
  }

  /** Goes one step back; false when there is no earlier page. */
  async back(): Promise<boolean> {
    const page = await this.currentPage();
    const before = page.url();
    const response = await page
      .goBack({ waitUntil: "domcontentloaded", timeout: this.options.navigationTimeoutMs })
      .catch((err: unknown) => {
        throw new Error(`Could not go back: ${firstLine(err)}`);
      });
    if (response === null && page.url() === before) return false;
    await this.settle(page);
    return true;
  }

  /** Visible text of the page, or of one element, cut at `text_max_chars`. */
  async text(ref?: ElementRef): Promise<string> {
    const page = await this.currentPage();
    const raw =
      ref === undefined
        ? ((await page.evaluate("document.body ? document.body.innerText : ''")) as string)
        : // biome-ignore lint/performance/useDomNodeTextContent: the rendered text (no hidden parts) is what the model should read
          await (await this.locate(page, ref)).locator.innerText({ timeout: this.options.actionTimeoutMs });
    const text = neutralizeFrameworkTags(raw)
      .replace(/[ \t]+\n/g, "\n")
      .replace(/\n{3,}/g, "\n\n")
      .trim();
    const max = this.options.textMaxChars;
    if (text.length <= max) return text || "(no visible text)";
    return `${text.slice(0, max)}\n[text cut at ${max} of ${text.length} characters (text_max_chars); pass the ref of a section to browser_get_text to read a part]`;
  }

  /** Writes a PNG to `hostPath` and returns its size in bytes. */
  async screenshot(hostPath: string, options: { fullPage?: boolean; ref?: ElementRef | undefined }): Promise<number> {
    const page = await this.currentPage();
    await mkdir(dirname(hostPath), { recursive: true });
    const bytes =
      options.ref === undefined
        ? await page.screenshot({ path: hostPath, type: "png", fullPage: options.fullPage ?? false, timeout: this.options.actionTimeoutMs })
        : await (await this.locate(page, options.ref)).locator.screenshot({
            path: hostPath,
            type: "png",
            timeout: this.options.actionTimeoutMs,
          });
    this.screenshots++;
    return bytes.byteLength;
  }

  /** The current page as a PNG in memory (the visible part, or the whole page), with its title and URL. */
  async capture(options: { fullPage?: boolean } = {}): Promise<PageCapture> {
    const page = await this.currentPage();
    const png = await page.screenshot({ type: "png", fullPage: options.fullPage ?? false, timeout: this.options.actionTimeoutMs });
    this.screenshots++;
    return { png, title: await page.title().catch(() => ""), url: page.url() };
  }

  /** A number for file names, unique within the session. */
  get screenshotCount(): number {
    return this.screenshots;
  }
}
