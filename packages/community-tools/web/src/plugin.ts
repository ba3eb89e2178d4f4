import { AntlerError, type AntlerPlugin, type AntlerTool, definePlugin, ErrorCodes } from "@antler/kernel";
import { type WebToolsConfig, webToolsConfigSchema } from "./config.js";
import {
  IMAGE_SEARCH_TOOL,
  type UrlCheckOptions,
  WEB_FETCH_TOOL,
  WEB_PROVIDERS,
  WEB_SEARCH_TOOL,
  WEB_TOOLS_PLUGIN_NAME,
  type WebSearchProvider,
} from "./contract.js";
import { createDirectProvider } from "./direct.js";
import { createPinnedDispatcher } from "./pinned-dispatcher.js";
import { createWebProviderRegistry } from "./registry.js";

export { WEB_TOOLS_PLUGIN_NAME };

export interface WebToolsPluginOptions {
  /** DNS lookup for the SSRF guard; tests pass a stub resolver. Default: the system resolver. */
  readonly lookup?: UrlCheckOptions["lookup"];
  /** The fetch under the guarded fetch. Default `globalThis.fetch`. */
  readonly fetch?: typeof fetch | undefined;
  /** Waits between retries; tests pass a fast one. */
  readonly sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
}

const CAPABILITY = { search: "search", fetch: "fetch", images: "images" } as const;

/**
 * Builds the `@antler/tools-web` plugin. The default export is `createWebToolsPlugin()`; tests and embedders
 * that need a stub resolver or a custom fetch build their own.
 */
export function createWebToolsPlugin(options: WebToolsPluginOptions = {}): AntlerPlugin<WebToolsConfig> {
  return definePlugin({
    name: WEB_TOOLS_PLUGIN_NAME,
    version: "0.1.0",
    kernel: "^0.1.0",
    description: "web_search, web_fetch and image_search, served by registered web providers, behind the SSRF guard.",
    configSchema: webToolsConfigSchema,
    setup(ctx) {
      const config = ctx.config;
      const where = `plugins[${ctx.plugin.name}].config`;
      const registry = createWebProviderRegistry();
      ctx.provide(WEB_PROVIDERS, { useValue: registry });
      registry.add(
        createDirectProvider({
          maxResponseBytes: config.direct.max_response_bytes,
          userAgent: config.direct.user_agent,
          maxPdfPages: config.direct.max_pdf_pages,
        }),
      );

      // The providers are picked (and config mistakes reported) at boot; the tools, which load LangChain, are
      // built on the first assembly, so `antler config check` checks the names without loading them.
      let providers: Record<keyof typeof CAPABILITY, WebSearchProvider | undefined> | undefined;
      let built: Promise<Map<string, AntlerTool>> | undefined;
      // One connection pool per kernel whose connections re-check resolved addresses (DNS rebinding), made by the
      // first fetch: loading the plugin (`antler config check`) never loads undici.
      let dispatcher: ReturnType<typeof createPinnedDispatcher> | undefined;
      const pinnedDispatcher = () => {
        if (!config.pin_resolved_addresses) return undefined;
        dispatcher ??= createPinnedDispatcher({ allowPrivateAddresses: config.allow_private_addresses, lookup: options.lookup });
        return dispatcher;
      };
      ctx.hooks.stop.tap(() => dispatcher?.close());
      // Provider plugins may set up after this one, so the names in config are resolved once every setup ran.
      ctx.hooks.boot.tap(() => {
        const pick = (key: keyof typeof CAPABILITY): WebSearchProvider | undefined => {
          const name = config[key];
          if (name === null) return undefined;
          const provider = registry.get(name);
          if (!provider) {
            throw new AntlerError(ErrorCodes.CONFIG_INVALID, `web provider "${name}" is not registered`, {
              where: `${where}.${key}`,
              hint: `Registered providers: ${registry.names().join(", ")}. Add the provider's plugin to \`plugins:\` (e.g. package: "@antler/tools-${name}").`,
            });
          }
          if (typeof provider[CAPABILITY[key]] !== "function") {
            const can = (["search", "fetch", "images"] as const).filter((k) => typeof provider[k] === "function");
            throw new AntlerError(ErrorCodes.CONFIG_INVALID, `web provider "${name}" cannot serve ${key}`, {
              where: `${where}.${key}`,
              hint: `"${name}" serves: ${can.join(", ")}. Pick another provider for ${key}, or null to leave the tool out.`,
            });
          }
          return provider;
        };
        providers = { search: pick("search"), fetch: pick("fetch"), images: pick("images") };
        built = undefined;
      });
      const tools = (picked: NonNullable<typeof providers>) =>
        (built ??= import("./tools.js").then((m) => {
          const list = m.createWebTools({
            config,
            providers: picked,
            lookup: options.lookup,
            fetch: options.fetch,
            sleep: options.sleep,
            get dispatcher() {
              return pinnedDispatcher();
            },
            logger: ctx.logger,
            where,
          });
          return new Map(list.map((t) => [t.name, t]));
        }));
      for (const name of [WEB_SEARCH_TOOL, WEB_FETCH_TOOL, IMAGE_SEARCH_TOOL]) {
        // Searches and fetches change nothing: after a takeover, one in flight is simply made again.
        ctx.tools.add(async () => (providers ? ((await tools(providers)).get(name) ?? null) : null), {
          name,
          group: config.group,
          idempotent: true,
        });
      }
    },
  });
}

/** `@antler/tools-web`: web_search, web_fetch and image_search behind registered providers and the SSRF guard. */
export default createWebToolsPlugin();
