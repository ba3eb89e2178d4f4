import { defineWebProviderPlugin } from "@antler/tools-web/provider";
import { serplyConfigSchema } from "./config.js";
import { createSerplyProvider } from "./provider.js";

export const SERPLY_PLUGIN_NAME = "@antler/tools-serply";

/** Registers the web provider `serply` (search) for `@antler/tools-web`. */
export const serplyToolsPlugin = defineWebProviderPlugin({
  name: SERPLY_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Web provider `serply`: web_search with Google results through the Serply API.",
  configSchema: serplyConfigSchema,
  // The key is read per call, not here, so a kernel that never searches boots without one.
  createProvider: (config, ctx) => createSerplyProvider(config, { where: `plugins[${ctx.plugin.name}].config.api_key` }),
});

export default serplyToolsPlugin;
