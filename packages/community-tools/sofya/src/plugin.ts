import { defineWebProviderPlugin } from "@antler/tools-web/provider";
import { sofyaConfigSchema } from "./config.js";
import { createSofyaProvider } from "./provider.js";

export const SOFYA_PLUGIN_NAME = "@antler/tools-sofya";

/** Registers the web provider `sofya` (search and fetch) for `@antler/tools-web`. */
export const sofyaToolsPlugin = defineWebProviderPlugin({
  name: SOFYA_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Web provider `sofya`: web_search with each result's page content, and web_fetch to Markdown, through sofya.co.",
  configSchema: sofyaConfigSchema,
  // The key is read per call, not here, so a kernel that never searches boots without one.
  createProvider: (config, ctx) => createSofyaProvider(config, { where: `plugins[${ctx.plugin.name}].config.api_key` }),
});

export default sofyaToolsPlugin;
