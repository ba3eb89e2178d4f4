import { defineWebProviderPlugin } from "@antler/tools-web/provider";
import { duckduckgoConfigSchema } from "./config.js";
import { createDuckDuckGoProvider } from "./provider.js";

export const DUCKDUCKGO_PLUGIN_NAME = "@antler/tools-duckduckgo";

/** Registers the web provider `duckduckgo` (search and images, no key) for `@antler/tools-web`. */
export const duckduckgoToolsPlugin = defineWebProviderPlugin({
  name: DUCKDUCKGO_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description:
    "Web provider `duckduckgo`: keyless web_search through DuckDuckGo's HTML endpoint and image_search through its i.js endpoint.",
  configSchema: duckduckgoConfigSchema,
  createProvider: (config) => createDuckDuckGoProvider(config),
});

export default duckduckgoToolsPlugin;
