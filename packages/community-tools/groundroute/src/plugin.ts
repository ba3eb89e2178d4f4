import { defineWebProviderPlugin } from "@antler/tools-web/provider";
import { groundrouteConfigSchema } from "./config.js";
import { createGroundrouteProvider } from "./provider.js";

export const GROUNDROUTE_PLUGIN_NAME = "@antler/tools-groundroute";

/** Registers the web provider `groundroute` (search and fetch) for `@antler/tools-web`. */
export const groundrouteToolsPlugin = defineWebProviderPlugin({
  name: GROUNDROUTE_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Web provider `groundroute`: web_search routed across six engines with caching and failover, and web_fetch (page mode).",
  configSchema: groundrouteConfigSchema,
  // The key is read per call, not here, so a kernel that never searches boots without one.
  createProvider: (config, ctx) => createGroundrouteProvider(config, { where: `plugins[${ctx.plugin.name}].config.api_key` }),
});

export default groundrouteToolsPlugin;
