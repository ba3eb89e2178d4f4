import { AntlerError, type AntlerPlugin, definePlugin, ErrorCodes, type PluginContext } from "@antler/kernel";
import type { z } from "zod";
import { WEB_PROVIDERS, WEB_TOOLS_PLUGIN_NAME, type WebProviderRegistry, type WebSearchProvider } from "./contract.js";

const PROVIDER_NAME = /^[a-z][a-z0-9_-]{0,40}$/;

/** A registry of web providers by name; one per kernel. */
export function createWebProviderRegistry(): WebProviderRegistry {
  const providers = new Map<string, WebSearchProvider>();
  return {
    add(provider) {
      if (!provider || typeof provider.name !== "string" || !PROVIDER_NAME.test(provider.name)) {
        throw new AntlerError(ErrorCodes.PLUGIN_SETUP_FAILED, `web provider name ${JSON.stringify(provider?.name)} is not valid`, {
          hint: "Provider names are lower-case letters, digits, _ and -, starting with a letter (they are written in config.yaml).",
        });
      }
      if (!provider.search && !provider.fetch && !provider.images) {
        throw new AntlerError(ErrorCodes.PLUGIN_SETUP_FAILED, `web provider "${provider.name}" implements none of search, fetch, images`);
      }
      if (providers.has(provider.name)) {
        throw new AntlerError(ErrorCodes.PLUGIN_SETUP_FAILED, `web provider "${provider.name}" is registered twice`, {
          hint: "Each provider name is registered by one plugin; remove the duplicate plugin entry from config.yaml.",
        });
      }
      providers.set(provider.name, provider);
    },
    get: (name) => providers.get(name),
    names: () => [...providers.keys()].sort(),
  };
}

/**
 * The web-provider registry of the kernel `ctx` belongs to: the one `@antler/tools-web` binds to
 * `WEB_PROVIDERS`. A provider plugin lists `@antler/tools-web` in `dependsOn`, so the token is bound by the
 * time its `setup` runs; without it the kernel says which plugin is missing.
 */
export function webProviderRegistry(ctx: Pick<PluginContext, "services">): WebProviderRegistry {
  return ctx.services.resolve(WEB_PROVIDERS);
}

/**
 * What a provider plugin calls in `setup`: makes `provider` available to `@antler/tools-web`'s tools under
 * `provider.name`, which config then names (`search: tavily`).
 */
export function registerWebProvider(ctx: Pick<PluginContext, "services">, provider: WebSearchProvider): void {
  webProviderRegistry(ctx).add(provider);
}

/** What `defineWebProviderPlugin` takes: the plugin manifest plus how to build the provider from its config. */
export interface WebProviderPluginDefinition<S extends z.ZodType> {
  readonly name: string;
  readonly version: string;
  /** Semver range of kernels the plugin fits, e.g. "^0.1.0". */
  readonly kernel: string;
  readonly description?: string;
  /** Other plugins to set up first. `@antler/tools-web` is always added, so it sets up first and a config without it fails at boot. */
  readonly dependsOn?: readonly string[];
  readonly configSchema: S;
  /**
   * Builds the provider from the plugin's validated config, in `setup` (synchronous, no I/O). Read API keys per
   * call rather than here, so a kernel that never uses the provider boots without one.
   */
  createProvider(config: z.output<S>, ctx: PluginContext<z.output<S>>): WebSearchProvider;
}

/**
 * Declares a web provider plugin: a `definePlugin` whose `setup` registers `createProvider(ctx.config, ctx)` with
 * `@antler/tools-web` (`registerWebProvider`). Use `definePlugin` yourself when the plugin does more than that.
 */
export function defineWebProviderPlugin<S extends z.ZodType>(definition: WebProviderPluginDefinition<S>): AntlerPlugin<z.output<S>> {
  const { createProvider, ...manifest } = definition;
  return definePlugin<S>({
    ...manifest,
    dependsOn: [...new Set([WEB_TOOLS_PLUGIN_NAME, ...(manifest.dependsOn ?? [])])],
    setup(ctx) {
      const context = ctx as PluginContext<z.output<S>>;
      registerWebProvider(context, createProvider(context.config, context));
    },
  }) as AntlerPlugin<z.output<S>>;
}
