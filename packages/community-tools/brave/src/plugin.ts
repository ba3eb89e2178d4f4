import { defineWebProviderPlugin } from "@antler/tools-web/provider";
import { braveConfigSchema } from "./config.js";
import { createBraveProvider } from "./provider.js";

export const BRAVE_PLUGIN_NAME = "@antler/tools-brave";

/** Registers the web provider `brave` (search and images) for `@antler/tools-web`. */
export const braveToolsPlugin = defineWebProviderPlugin({
  name: BRAVE_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Web provider `brave`: web_search and image_search through the Brave Search API.",
  configSchema: braveConfigSchema,
  // The key is read per call, not here, so a kernel that never searches boots without one.
  createProvider: (config, ctx) => createBraveProvider(config, { where: `plugins[${ctx.plugin.name}].config.api_key` }),
});

export default braveToolsPlugin;
