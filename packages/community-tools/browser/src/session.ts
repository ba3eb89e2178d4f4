import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { neutralizeFrameworkTags } from "@antler/tools-web";
import type { Browser, BrowserContext, Locator, Page, Request } from "playwright-core";
import { BrowserError, BrowserErrorCodes } from "./errors.js";
import { type BlockedRequest, type CheckUrl, installRequestGuard } from "./guard.js";
import { formatSnapshot, type PageSnapshot, REF_ATTRIBUTE, snapshotExpression } from "./snapshot.js";

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

function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (message.split("\n")[0] ?? message).replace(/^[a-zA-Z.]+: /, "");
}

/**
 * One thread's browser: a context (cookies, storage) and its current page. Actions run one at a time, so
 * parallel tool calls of one step cannot interleave on the page.
 */
export class BrowserSession {
  readonly key: string;
  readonly scope: SessionScope;
  readonly createdAt = Date.now();
  lastUsedAt = Date.now();
  private pageRef: Page;
  private nextRef = 1;
  private blocked: BlockedRequest[] = [];
  private blockedOmitted = 0;
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
    if (this.blocked.length >= MAX_BLOCKED_KEPT) this.blockedOmitted++;
    else this.blocked.push(entry);
  }

  private watch(page: Page): void {
    const isMainNavigation = (request: Request) => {
      try {
        return request.isNavigationRequest() && request.frame() === page.mainFrame();
      } catch {
        return false;
      }
    };
    page.on("request", (request) => {
      if (isMainNavigation(request)) this.navigations.add(request);
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
  private async awaitEffects(extra: () => boolean = () => false): Promise<void> {
    const started = () => extra() || this.pendingRedirect !== undefined || this.navigating();
    for (let waited = 0; !started() && waited < ACTION_EFFECT_GRACE_MS; waited += 20) await sleep(20);
  }

  /** Whether a top-level navigation of an open page is still loading (requests of closed pages are dropped). */
  private navigating(): boolean {
    for (const request of this.navigations) {
      let closed = true;
      try {
        closed = request.frame().page().isClosed();
      } catch {
        // no frame any more
      }
      if (closed) this.navigations.delete(request);
    }
    return this.navigations.size > 0;
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

  async snapshot(note?: string): Promise<string> {
    const page = await this.currentPage();
    let snap: PageSnapshot;
    try {
      snap = (await page.evaluate(snapshotExpression({ startRef: this.nextRef, maxChars: this.options.snapshotMaxChars }))) as PageSnapshot;
    } catch (err) {
      // The page navigated while we read it: wait for it and read once more.
      await page.waitForLoadState("domcontentloaded").catch(() => {});
      try {
        snap = (await page.evaluate(
          snapshotExpression({ startRef: this.nextRef, maxChars: this.options.snapshotMaxChars }),
        )) as PageSnapshot;
      } catch {
        throw new Error(`Could not read the page: ${firstLine(err)}`);
      }
    }
    this.nextRef = Math.max(this.nextRef, snap.nextRef);
    const blocked = this.blocked;
    const blockedOmitted = this.blockedOmitted;
    this.blocked = [];
    this.blockedOmitted = 0;
    // Page text is data: text shaped like the framework's own tags must not read as a turn or an instruction.
    return neutralizeFrameworkTags(formatSnapshot(snap, { blocked, blockedOmitted, ...(note ? { note } : {}) }));
  }

  private async locate(page: Page, ref: number): Promise<Locator> {
    const locator = page.locator(`[${REF_ATTRIBUTE}="${ref}"]`);
    const count = await locator.count();
    if (count !== 1) {
      throw new BrowserError(
        BrowserErrorCodes.STALE_REF,
        `Ref [${ref}] is ${count === 0 ? "not on the current page" : "ambiguous on the current page"}: the page changed or navigated since the snapshot it came from. ` +
          "Take a new snapshot with browser_snapshot and use a ref from it.",
      );
    }
    return locator;
  }

  async click(ref: number): Promise<void> {
    const page = await this.currentPage();
    const locator = await this.locate(page, ref);
    // A click may open a popup (target=_blank, window.open); it appears within a few milliseconds if at all.
    let opened: Page | undefined;
    const onPopup = (popup: Page) => {
      opened ??= popup;
    };
    page.on("popup", onPopup);
    try {
      try {
        await locator.click({ timeout: this.options.actionTimeoutMs });
      } catch (err) {
        throw new Error(`Could not click [${ref}]: ${firstLine(err)}. Take a new snapshot; the element may be hidden or covered.`);
      }
      await this.awaitEffects(() => opened !== undefined);
    } finally {
      page.off("popup", onPopup);
    }
    const popup = opened as Page | undefined;
    if (popup && !popup.isClosed()) {
      this.adopt(popup);
      await popup.waitForLoadState("domcontentloaded", { timeout: this.options.navigationTimeoutMs }).catch(() => {});
    }
    await this.settle(this.pageRef);
  }

  async type(ref: number, text: string, submit: boolean): Promise<void> {
    const page = await this.currentPage();
    const locator = await this.locate(page, ref);
    const kind = await locator.evaluate((el: { localName: string; type?: string }) => {
      if (el.localName === "select") return "select";
      const type = (el.type ?? "").toLowerCase();
      return el.localName === "input" && ["checkbox", "radio", "submit", "button", "reset", "image", "file"].includes(type) ? type : "text";
    });
    if (kind === "select") {
      const chosen = await locator.selectOption({ label: text }, { timeout: this.options.actionTimeoutMs }).catch(() => null);
      if (!chosen || chosen.length === 0) {
        const byValue = await locator.selectOption(text, { timeout: this.options.actionTimeoutMs }).catch(() => null);
        if (!byValue || byValue.length === 0)
          throw new Error(
            `[${ref}] is a select without an option labelled ${JSON.stringify(text)}; use one of the options the snapshot lists.`,
          );
      }
    } else if (kind !== "text") {
      throw new BrowserError(
        BrowserErrorCodes.STALE_REF,
        `[${ref}] is a ${kind} input, which takes no text; use browser_click on it instead.`,
      );
    } else {
      try {
        await locator.fill(text, { timeout: this.options.actionTimeoutMs });
      } catch (err) {
        throw new Error(`Could not type into [${ref}]: ${firstLine(err)}. It may not be a text field; take a new snapshot.`);
      }
    }
    if (submit) {
      await locator.press("Enter", { timeout: this.options.actionTimeoutMs }).catch((err: unknown) => {
        throw new Error(`Typed into [${ref}] but pressing Enter failed: ${firstLine(err)}`);
      });
      await this.awaitEffects();
    }
    await this.settle(this.pageRef);
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
  async text(ref?: number): Promise<string> {
    const page = await this.currentPage();
    const raw =
      ref === undefined
        ? ((await page.evaluate("document.body ? document.body.innerText : ''")) as string)
        : // biome-ignore lint/performance/useDomNodeTextContent: the rendered text (no hidden parts) is what the model should read
          await (await this.locate(page, ref)).innerText({ timeout: this.options.actionTimeoutMs });
    const text = neutralizeFrameworkTags(raw)
      .replace(/[ \t]+\n/g, "\n")
      .replace(/\n{3,}/g, "\n\n")
      .trim();
    const max = this.options.textMaxChars;
    if (text.length <= max) return text || "(no visible text)";
    return `${text.slice(0, max)}\n[text cut at ${max} of ${text.length} characters (text_max_chars); pass the ref of a section to browser_get_text to read a part]`;
  }

  /** Writes a PNG to `hostPath` and returns its size in bytes. */
  async screenshot(hostPath: string, options: { fullPage?: boolean; ref?: number | undefined }): Promise<number> {
    const page = await this.currentPage();
    await mkdir(dirname(hostPath), { recursive: true });
    const bytes =
      options.ref === undefined
        ? await page.screenshot({ path: hostPath, type: "png", fullPage: options.fullPage ?? false, timeout: this.options.actionTimeoutMs })
        : await (await this.locate(page, options.ref)).screenshot({ path: hostPath, type: "png", timeout: this.options.actionTimeoutMs });
    this.screenshots++;
    return bytes.byteLength;
  }

  /** A number for file names, unique within the session. */
  get screenshotCount(): number {
    return this.screenshots;
  }
}
