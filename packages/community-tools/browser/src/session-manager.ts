import type { Logger } from "@antler/kernel";
import { validatePublicHttpUrl } from "@antler/tools-web/ssrf";
import type { Browser } from "playwright-core";
import type { BrowserConfig } from "./config.js";
import { BrowserError, BrowserErrorCodes } from "./errors.js";
import type { CheckUrl } from "./guard.js";
import { connectOverCdp, launchChromium } from "./launch.js";
import { connectBrowserless, type Env } from "./remote.js";
import { BrowserSession, type PageCapture, type SessionOptions, type SessionScope } from "./session.js";

export interface BrowserManagerOptions {
  readonly config: BrowserConfig;
  /** Replaces the SSRF check (tests use it to treat a loopback server as a public site). Default `validatePublicHttpUrl`. */
  readonly checkUrl?: CheckUrl | undefined;
  readonly logger?: Logger | undefined;
  /** Where `remote.token_env` is looked up, at each connect. Default `process.env`. */
  readonly env?: Env | undefined;
}

/** The warning logged whenever a manager attaches to a `cdp_url` browser under `allow_unguarded_cdp`. */
export const UNGUARDED_CDP_WARNING =
  "allow_unguarded_cdp: true: attaching to the browser at cdp_url, whose other tabs and contexts, extensions, service workers and launch flags the SSRF guard cannot screen; only the plugin's own contexts are guarded";

export interface SessionInfo {
  readonly userId: string;
  readonly threadId: string;
  readonly pinned: boolean;
  readonly lastUsedAt: number;
  readonly url: string;
}

function keyOf(scope: SessionScope): string {
  return `${scope.userId}\n${scope.threadId}`;
}

/**
 * Owns the browser and its sessions, one per (user, thread). `max_sessions` is a hard cap: a thread that needs a
 * new session when the cap is reached gets the least recently used unpinned session closed for it, and is
 * refused when every session is pinned. A session is pinned while its thread has a run in progress (`pin`) or
 * one of its actions is running (`withSession`).
 */
export class BrowserSessionManager {
  private readonly config: BrowserConfig;
  private readonly checkUrl: CheckUrl;
  private readonly logger: Logger | undefined;
  private readonly env: Env;
  private readonly live = new Map<string, BrowserSession>();
  private readonly pins = new Map<string, number>();
  private browser: Promise<Browser> | undefined;
  /** Capacity decisions and session creation run one at a time, so the cap holds under concurrency. */
  private admission: Promise<unknown> = Promise.resolve();
  private captures: Promise<unknown> = Promise.resolve();
  private closed = false;
  private sweepTimer: NodeJS.Timeout | undefined;
  private lastActivity = Date.now();

  constructor(options: BrowserManagerOptions) {
    this.config = options.config;
    this.checkUrl = options.checkUrl ?? validatePublicHttpUrl;
    this.logger = options.logger;
    this.env = options.env ?? process.env;
    if (this.config.cdp_url !== undefined && !this.config.allow_unguarded_cdp) {
      throw new BrowserError(
        BrowserErrorCodes.UNSAFE_CONFIG,
        `[${BrowserErrorCodes.UNSAFE_CONFIG}] cdp_url is set without allow_unguarded_cdp: true. The SSRF guard cannot screen a browser it did not launch (its other tabs, extensions and flags); set allow_unguarded_cdp: true to accept that, use remote: { provider: browserless } for a hosted browser the guard covers, or remove cdp_url.`,
      );
    }
    if (this.config.cdp_url !== undefined && this.config.remote !== undefined) {
      throw new BrowserError(
        BrowserErrorCodes.UNSAFE_CONFIG,
        `[${BrowserErrorCodes.UNSAFE_CONFIG}] remote and cdp_url are both set; keep one of them.`,
      );
    }
    if (this.config.cdp_url !== undefined) this.logger?.warn({ cdp_url: this.config.cdp_url }, UNGUARDED_CDP_WARNING);
  }

  get maxSessions(): number {
    return this.config.max_sessions;
  }

  /** Marks a (user, thread) as in use until the returned function is called. Works before its session exists. */
  pin(scope: SessionScope): () => void {
    const key = keyOf(scope);
    this.pins.set(key, (this.pins.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.pins.get(key) ?? 1) - 1;
      if (left > 0) this.pins.set(key, left);
      else this.pins.delete(key);
      const session = this.live.get(key);
      if (session) session.lastUsedAt = Date.now();
    };
  }

  isPinned(scope: SessionScope): boolean {
    return (this.pins.get(keyOf(scope)) ?? 0) > 0;
  }

  get(scope: SessionScope): BrowserSession | undefined {
    return this.live.get(keyOf(scope));
  }

  sessions(): SessionInfo[] {
    return [...this.live.values()].map((s) => ({
      userId: s.scope.userId,
      threadId: s.scope.threadId,
      pinned: (this.pins.get(s.key) ?? 0) > 0,
      lastUsedAt: s.lastUsedAt,
      url: s.page.isClosed() ? "" : s.page.url(),
    }));
  }

  /** Runs `fn` on the thread's session (created if needed), pinned and serialized with its other actions. */
  async withSession<T>(scope: SessionScope, fn: (session: BrowserSession) => Promise<T>): Promise<T> {
    const unpin = this.pin(scope);
    try {
      const session = await this.acquire(scope);
      try {
        return await session.run(() => fn(session));
      } finally {
        session.lastUsedAt = Date.now();
        this.lastActivity = Date.now();
      }
    } finally {
      unpin();
    }
  }

  private acquire(scope: SessionScope): Promise<BrowserSession> {
    const key = keyOf(scope);
    const existing = this.live.get(key);
    if (existing && !existing.closed) return Promise.resolve(existing);
    const next = this.admission.then(() => this.admit(key, scope));
    this.admission = next.catch(() => {});
    return next;
  }

  private async admit(key: string, scope: SessionScope): Promise<BrowserSession> {
    if (this.closed) throw new BrowserError(BrowserErrorCodes.CLOSED, "The browser is shut down (the kernel is closing).");
    const existing = this.live.get(key);
    if (existing && !existing.closed) return existing;
    while (this.live.size >= this.config.max_sessions) {
      const victim = [...this.live.values()]
        .filter((s) => (this.pins.get(s.key) ?? 0) === 0)
        .sort((a, b) => a.lastUsedAt - b.lastUsedAt)[0];
      if (!victim) {
        throw new BrowserError(
          BrowserErrorCodes.SESSION_LIMIT,
          `No browser session is available: all ${this.config.max_sessions} sessions (max_sessions) are in use by other conversations that are running right now. ` +
            "Try the browser again later, or continue without it; an operator can raise max_sessions in the @antler/tools-browser config.",
        );
      }
      this.logger?.info(
        { thread_id: victim.scope.threadId, user_id: victim.scope.userId },
        "closing the least recently used idle browser session to make room",
      );
      await this.closeKey(victim.key);
    }
    const browser = await this.ensureBrowser();
    const session = await BrowserSession.open(browser, key, scope, this.sessionOptions());
    this.live.set(key, session);
    this.ensureSweep();
    return session;
  }

  private sessionOptions(): SessionOptions {
    const c = this.config;
    return {
      checkUrl: this.checkUrl,
      allowPrivateAddresses: c.allow_private_addresses,
      navigationTimeoutMs: c.navigation_timeout_seconds * 1000,
      actionTimeoutMs: c.action_timeout_seconds * 1000,
      snapshotMaxChars: c.snapshot_max_chars,
      textMaxChars: c.text_max_chars,
      viewport: c.viewport,
      userAgent: c.user_agent,
    };
  }

  private ensureBrowser(): Promise<Browser> {
    if (this.browser) return this.browser;
    const c = this.config;
    const timeoutMs = c.navigation_timeout_seconds * 1000;
    const started = (
      c.remote !== undefined
        ? connectBrowserless(c.remote, this.env, timeoutMs)
        : c.cdp_url !== undefined
          ? connectOverCdp(c.cdp_url, timeoutMs)
          : launchChromium({ executablePath: c.executable_path, headless: c.headless, extraArgs: c.extra_args })
    ).then((browser) => {
      browser.on("disconnected", () => {
        if (this.browser !== started) return;
        this.browser = undefined;
        if (!this.closed) this.logger?.warn("the browser disconnected; its sessions are gone and the next browser call starts a new one");
        for (const session of this.live.values()) void session.close();
        this.live.clear();
      });
      return browser;
    });
    this.browser = started;
    // A failed launch is reported to this call and retried by the next one.
    started.catch(() => {
      if (this.browser === started) this.browser = undefined;
    });
    return started;
  }

  private async closeKey(key: string): Promise<void> {
    const session = this.live.get(key);
    if (!session) return;
    this.live.delete(key);
    await session.close();
  }

  /**
   * Opens `url` in a fresh context of its own, guarded like every session, and returns its screenshot, title and
   * final URL; the context is closed before this returns. The thread's session (page, cookies, history) is not
   * touched, and nothing on the page is clicked or typed. Captures run one at a time, so they add at most one
   * context to the sessions.
   */
  capture(scope: SessionScope, url: string, options: { fullPage?: boolean } = {}): Promise<PageCapture> {
    const next = this.captures.then(async () => {
      if (this.closed) throw new BrowserError(BrowserErrorCodes.CLOSED, "The browser is shut down (the kernel is closing).");
      this.lastActivity = Date.now();
      const browser = await this.ensureBrowser();
      this.ensureSweep();
      const session = await BrowserSession.open(browser, `capture\0${keyOf(scope)}`, scope, this.sessionOptions());
      try {
        await session.navigate(url);
        return await session.capture(options);
      } finally {
        await session.close();
        this.lastActivity = Date.now();
      }
    });
    this.captures = next.catch(() => {});
    return next;
  }

  /** Closes the thread's session; false when it had none. */
  async closeSession(scope: SessionScope): Promise<boolean> {
    const key = keyOf(scope);
    if (!this.live.has(key)) return false;
    await this.closeKey(key);
    return true;
  }

  private ensureSweep(): void {
    const idle = this.config.idle_timeout_seconds;
    if (idle <= 0 || this.sweepTimer) return;
    const every = Math.max(1_000, Math.min(30_000, (idle * 1000) / 2));
    this.sweepTimer = setInterval(() => void this.sweepIdle(), every);
    this.sweepTimer.unref();
  }

  /** Closes sessions idle longer than `idle_timeout_seconds`, and the browser once no session is left for as long. */
  async sweepIdle(now = Date.now()): Promise<void> {
    const idleMs = this.config.idle_timeout_seconds * 1000;
    if (idleMs <= 0 || this.closed) return;
    for (const session of [...this.live.values()]) {
      if ((this.pins.get(session.key) ?? 0) === 0 && now - session.lastUsedAt >= idleMs) {
        this.logger?.debug({ thread_id: session.scope.threadId }, "closing an idle browser session");
        await this.closeKey(session.key);
      }
    }
    if (this.live.size === 0 && this.browser && now - this.lastActivity >= idleMs) {
      const browser = this.browser;
      this.browser = undefined;
      await (await browser.catch(() => undefined))?.close().catch(() => {});
    }
  }

  /** Closes every session and the browser process. Idempotent; the manager refuses new sessions afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    await this.admission.catch(() => {});
    const sessions = [...this.live.values()];
    this.live.clear();
    await Promise.all(sessions.map((s) => s.close()));
    const browser = this.browser;
    this.browser = undefined;
    if (browser) await (await browser.catch(() => undefined))?.close().catch(() => {});
  }
}
