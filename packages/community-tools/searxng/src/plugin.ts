import { defineWebProviderPlugin, WEB_TOOLS_PLUGIN_NAME } from "@antler/tools-web/provider";
import { searxngConfigSchema } from "./config.js";
import { createSearxngProvider } from "./provider.js";

/** Web provider `searxng`: a self-hosted SearXNG instance's JSON API, for web_search and image_search. */
const searxngPlugin = defineWebProviderPlugin({
  name: "@antler/tools-searxng",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Web provider `searxng`: web_search and image_search through a self-hosted SearXNG instance (no key).",
  dependsOn: [WEB_TOOLS_PLUGIN_NAME],
  configSchema: searxngConfigSchema,
  createProvider: (config) => createSearxngProvider(config),
});

export default searxngPlugin;
