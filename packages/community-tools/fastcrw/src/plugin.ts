import { defineWebProviderPlugin } from "@antler/tools-web/provider";
import { fastcrwConfigSchema } from "./config.js";
import { createFastcrwProvider } from "./provider.js";

export const FASTCRW_PLUGIN_NAME = "@antler/tools-fastcrw";

/** Registers the web provider `fastcrw` (search and fetch) for `@antler/tools-web`. */
export const fastcrwToolsPlugin = defineWebProviderPlugin({
  name: FASTCRW_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Web provider `fastcrw`: web_search and web_fetch (scrape to Markdown) through fastCRW, hosted or self-hosted.",
  configSchema: fastcrwConfigSchema,
  // The key is read per call, not here, so a kernel that never searches boots without one.
  createProvider: (config, ctx) => createFastcrwProvider(config, { where: `plugins[${ctx.plugin.name}].config.api_key` }),
});

export default fastcrwToolsPlugin;
