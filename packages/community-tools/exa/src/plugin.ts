import { defineWebProviderPlugin } from "@antler/tools-web/provider";
import { exaConfigSchema } from "./config.js";
import { createExaProvider } from "./provider.js";

export const EXA_PLUGIN_NAME = "@antler/tools-exa";

/** Registers the web provider `exa` (search and fetch) for `@antler/tools-web`. */
export const exaToolsPlugin = defineWebProviderPlugin({
  name: EXA_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Web provider `exa`: web_search through Exa's /search and web_fetch through its /contents.",
  configSchema: exaConfigSchema,
  // The key is read per call, not here, so a kernel that never searches boots without one.
  createProvider: (config, ctx) => createExaProvider(config, { where: `plugins[${ctx.plugin.name}].config.api_key` }),
});

export default exaToolsPlugin;
