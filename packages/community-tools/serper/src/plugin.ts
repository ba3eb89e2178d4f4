import { defineWebProviderPlugin } from "@antler/tools-web/provider";
import { serperConfigSchema } from "./config.js";
import { createSerperProvider } from "./provider.js";

export const SERPER_PLUGIN_NAME = "@antler/tools-serper";

/** Registers the web provider `serper` (search and images) for `@antler/tools-web`. */
export const serperToolsPlugin = defineWebProviderPlugin({
  name: SERPER_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Web provider `serper`: web_search and image_search with Google results through serper.dev.",
  configSchema: serperConfigSchema,
  // The key is read per call, not here, so a kernel that never searches boots without one.
  createProvider: (config, ctx) => createSerperProvider(config, { where: `plugins[${ctx.plugin.name}].config.api_key` }),
});

export default serperToolsPlugin;
