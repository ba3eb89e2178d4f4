import { fileURLToPath } from "node:url";
import { definePlugin } from "@antler/kernel";
import { defineGatewayRoute, type GatewayRoute, provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { type ConsoleConfig, consoleConfigSchema, consoleSuggestions, PLUGIN_NAME } from "./config.js";
import { ARTIFACT_HTML_PATH, serveArtifactHtml } from "./html-frame.js";
import { consoleSpanMiddleware, MiddlewareSpanRelay } from "./spans.js";
import { StaticSite } from "./static.js";

/** The console's client-side routes: each serves the shell, and the app draws the screen (SPA fallback). */
export const CONSOLE_PAGES = ["/", "/threads", "/threads/:id", "/batches", "/schedules", "/status"] as const;

/** Where the workspace build writes the app: `dist/web` of this package (from `src/` and `dist/` alike). */
export function defaultStaticDir(): string {
  return fileURLToPath(new URL("../dist/web/", import.meta.url));
}

/**
 * `@antler/plugin-console`: the Antler Console, a single-page app served by the gateway at `/` (the API stays
 * under `/api`). The shell and assets are public, like any login page; every API call the page makes carries
 * the key the user enters (or none under `auth.mode: none`).
 */
export default definePlugin({
  name: PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Antler Console: a web UI at / on `antler serve` (threads, chat, human input, timeline, artifacts, batches, schedules).",
  configSchema: consoleConfigSchema,
  setup(ctx) {
    const config: ConsoleConfig = ctx.config;
    const site = new StaticSite(config.static_dir ?? defaultStaticDir());
    if (config.timeline) {
      ctx.middleware.add(consoleSpanMiddleware(), { stage: "first" });
      const relay = new MiddlewareSpanRelay(config.middleware_span_min_ms);
      ctx.hooks.start.tap(() => relay.start());
      ctx.hooks.stop.tap(() => relay.stop());
      ctx.hooks.runStart.tap((run) => relay.runStarted(run.traceId), { stage: "first" });
      ctx.hooks.runEnd.tap((run) => relay.runEnded(run.traceId), { stage: "last" });
    }
    const pages: GatewayRoute[] = CONSOLE_PAGES.map((path) =>
      defineGatewayRoute({
        method: "GET",
        path,
        mount: "root",
        auth: "none",
        summary: path === "/" ? "The Antler Console (web UI)." : `The console's ${path} page.`,
        handler: ({ request }) => site.shell(request),
      }),
    );
    provideGatewayRoutes(ctx, {
      routes: [
        ...pages,
        defineGatewayRoute({
          method: "GET",
          path: "/assets/*",
          mount: "root",
          auth: "none",
          summary: "The console's built assets (hashed names, cached as immutable).",
          handler: ({ request }) => site.asset(request),
        }),
        defineGatewayRoute({
          method: "GET",
          path: ARTIFACT_HTML_PATH,
          summary: "An HTML artifact of a thread, inline under a sandboxing CSP, for the console's artifact viewer.",
          handler: (request) => serveArtifactHtml(request, config.artifacts.html_scripts),
        }),
        defineGatewayRoute({
          method: "GET",
          path: "/console/status",
          summary: "Read-only status for the console: loaded plugins, models, upload limits, and the empty-thread suggestions.",
          handler: async ({ client, principal, traceId }) => {
            // Loaded here: the gateway that serves this route has the runtime loaded already, and `config check`
            // or `plugins list` never pays for it.
            const { runtimeConfig } = await import("@antler/plugin-runtime");
            const uploads = runtimeConfig(client.kernel.config).uploads;
            return {
              body: {
                plugins: client.kernel.plugins.map((p) => ({ name: p.name, version: p.version, description: p.description ?? null })),
                // Only what the caller's role may run on, as GET /api/models.
                models: await client.listModels({ userId: principal.userId, principal, traceId }),
                uploads: { max_files: uploads.max_files, max_file_bytes: uploads.max_file_bytes },
                artifacts: { html_scripts: config.artifacts.html_scripts, csv_max_rows: config.artifacts.csv_max_rows },
                suggestions: consoleSuggestions(config),
                // The model a run takes when the request names none (the page offers Thinking by it).
                default_model: client.kernel.config.default_model ?? client.kernel.config.models[0]?.name ?? null,
              },
            };
          },
        }),
      ],
    });
  },
});
