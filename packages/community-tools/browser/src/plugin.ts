import { type AntlerTool, createToken, DEFAULT_USER_ID, definePlugin } from "@antler/kernel";
import { provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { browserCheckCommand } from "./check.js";
import { browserConfigSchema } from "./config.js";
import type { CheckUrl } from "./guard.js";
import { assertBrowserStartable, loadPlaywright } from "./launch.js";
import { browserLiveRoutes } from "./live.js";
import { BROWSER_TOOL_NAMES, WEB_CAPTURE_TOOL_GROUP, WEB_CAPTURE_TOOL_NAME } from "./names.js";
import { type Env, remoteToken } from "./remote.js";
import { BrowserSessionManager } from "./session-manager.js";

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
    description:
      "Browser automation on the system Chromium: navigate, snapshot with refs, click, type, read, back, screenshot; and web_capture, a read-only page capture.",
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
      // The tools (LangChain) are built on the first assembly, so `antler config check` loads none of them.
      let tools: Promise<Map<string, AntlerTool>> | undefined;
      const built = () =>
        (tools ??= import("./tools.js").then(
          (m) => new Map(m.createBrowserTools({ manager, baseDir: ctx.paths.baseDir }).map((t) => [t.name, t])),
        ));
      for (const name of BROWSER_TOOL_NAMES) {
        ctx.tools.add(async () => (await built()).get(name) ?? null, { name, group: BROWSER_TOOL_GROUP });
      }
      // The run's model decides whether the capture is shown to it (vision) or only saved.
      const models = ctx.kernelConfig.models;
      const seesImages = (modelName: string | undefined) =>
        models.find((m) => m.name === (modelName ?? ctx.kernelConfig.default_model ?? models[0]?.name))?.supports_vision === true;
      ctx.tools.add(
        async (assembly) =>
          (await import("./capture-tool.js")).createWebCaptureTool({
            manager,
            baseDir: ctx.paths.baseDir,
            showToModel: seesImages(assembly.modelName),
          }),
        { name: WEB_CAPTURE_TOOL_NAME, group: WEB_CAPTURE_TOOL_GROUP },
      );
      // Mounted only when the gateway serves; the console shows them.
      if (ctx.config.live.enabled) provideGatewayRoutes(ctx, { routes: browserLiveRoutes(manager, ctx.config.live, ctx.logger) });
    },
  });
}

/** `@antler/tools-browser` with the default SSRF guard. */
export default createBrowserPlugin();
