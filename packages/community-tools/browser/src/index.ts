import { createToken, DEFAULT_USER_ID, definePlugin } from "@antler/kernel";
import { provideGatewayRoutes } from "@antler/plugin-gateway/routes";
import { browserCheckCommand } from "./check.js";
import { browserConfigSchema } from "./config.js";
import type { CheckUrl } from "./guard.js";
import { assertBrowserStartable, loadPlaywright } from "./launch.js";
import { browserLiveRoutes } from "./live.js";
import { type Env, remoteToken } from "./remote.js";
import { BrowserSessionManager } from "./session-manager.js";
import { createBrowserTools } from "./tools.js";

export { type BrowserCheckResult, browserCheckCommand, checkBrowser } from "./check.js";
export {
  type BrowserConfig,
  type BrowserConfigInput,
  browserConfigSchema,
  DEFAULT_BROWSERLESS_TOKEN_ENV,
  DEFAULT_EXECUTABLE_PATH,
  type RemoteBrowserConfig,
  remoteBrowserSchema,
} from "./config.js";
export { BrowserError, type BrowserErrorCode, BrowserErrorCodes, isBrowserError } from "./errors.js";
export { ELEMENT_REF_PATTERN, type ElementRef, FrameRefs, type ParsedRef, parseElementRef } from "./frame-refs.js";
export { type BlockedRequest, type CheckUrl, installRequestGuard, type RequestGuardOptions } from "./guard.js";
export {
  assertBrowserStartable,
  BASE_CHROMIUM_ARGS,
  checkChromiumExecutable,
  chromiumArgs,
  connectOverCdp,
  isRoot,
  type LaunchOptions,
  launchChromium,
  loadPlaywright,
} from "./launch.js";
export { browserLiveRoutes, type LiveInput, type LiveViewConfig, LiveViewErrorCodes } from "./live.js";
export { browserlessUrl, connectBrowserless, type Env, redact, remoteToken } from "./remote.js";
export {
  BrowserSession,
  MAX_FRAME_DEPTH,
  MAX_SNAPSHOT_FRAMES,
  MAX_SNAPSHOT_REFS,
  type SessionOptions,
  type SessionScope,
} from "./session.js";
export { type BrowserManagerOptions, BrowserSessionManager, type SessionInfo, UNGUARDED_CDP_WARNING } from "./session-manager.js";
export {
  FRAME_SLOT_ATTRIBUTE,
  type FrameSlot,
  type FrameSnapshot,
  formatSnapshot,
  type PageSnapshot,
  REF_ATTRIBUTE,
  type SnapshotArgs,
  snapshotExpression,
} from "./snapshot.js";
export { BROWSER_TOOL_NAMES, type BrowserToolOptions, browserScopeOf, createBrowserTools } from "./tools.js";

export const BROWSER_PLUGIN_NAME = "@antler/tools-browser";
/** Tool group of the browser tools (`tool_groups` in config.yaml). */
export const BROWSER_TOOL_GROUP = "browser";
/** DI token of the kernel's browser session manager (diagnostics, a gateway listing sessions). */
export const BROWSER_SESSIONS = createToken<BrowserSessionManager>("antler.browser.sessions");

export interface BrowserPluginOptions {
  /** Replaces the SSRF check for every request (default: `validatePublicHttpUrl` of `@antler/tools-web`). */
  checkUrl?: CheckUrl;
  /** Called with each kernel's session manager once it exists (diagnostics, tests). */
  onManager?: (manager: BrowserSessionManager) => void;
  /** Where `remote.token_env` is looked up. Default `process.env`. */
  env?: Env;
}

/**
 * The browser plugin with options config.yaml cannot carry. Each kernel that sets it up gets its own session
 * manager; the browser is launched on the first browser tool call and closed with the kernel.
 */
export function createBrowserPlugin(options: BrowserPluginOptions = {}) {
  return definePlugin({
    name: BROWSER_PLUGIN_NAME,
    version: "0.1.0",
    kernel: "^0.1.0",
    description: "Browser automation on the system Chromium: navigate, snapshot with refs, click, type, read, back, screenshot.",
    configSchema: browserConfigSchema,
    setup(ctx) {
      const manager = new BrowserSessionManager({ config: ctx.config, checkUrl: options.checkUrl, logger: ctx.logger, env: options.env });
      options.onManager?.(manager);
      ctx.provide(BROWSER_SESSIONS, { useValue: manager });
      ctx.commands.add(browserCheckCommand(() => ctx.config, options.env));
      // A thread's session is pinned for the whole run, not just while a tool call runs: the model is mid-task
      // on that page between tool calls.
      const unpins = new Map<string, () => void>();
      ctx.hooks.runStart.tap((run) => {
        if (run.threadId !== undefined)
          unpins.set(run.runId, manager.pin({ userId: run.userId ?? DEFAULT_USER_ID, threadId: run.threadId }));
      });
      ctx.hooks.runEnd.tap((run) => {
        unpins.get(run.runId)?.();
        unpins.delete(run.runId);
      });
      // Fail the start, not the first browser call: a host that comes up with browser tools that cannot work only
      // surfaces the setup problem to a user mid-task. Playwright must load either way; a remote browser is
      // connected on first use (its token must be set at start), a CDP browser is attached on first use.
      ctx.hooks.start.tap(async () => {
        await loadPlaywright();
        if (ctx.config.remote !== undefined) remoteToken(ctx.config.remote, options.env ?? process.env);
        else if (ctx.config.cdp_url === undefined) await assertBrowserStartable(ctx.config.executable_path);
      });
      ctx.hooks.stop.tap(() => manager.close());
      for (const tool of createBrowserTools({ manager, baseDir: ctx.paths.baseDir })) ctx.tools.add(tool, { group: BROWSER_TOOL_GROUP });
      // Mounted only when the gateway serves; the console shows them.
      if (ctx.config.live.enabled) provideGatewayRoutes(ctx, { routes: browserLiveRoutes(manager, ctx.config.live, ctx.logger) });
    },
  });
}

/** `@antler/tools-browser` with the default SSRF guard. */
export default createBrowserPlugin();
