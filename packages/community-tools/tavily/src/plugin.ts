import { defineWebProviderPlugin, WEB_TOOLS_PLUGIN_NAME } from "@antler/tools-web/provider";
import { tavilyConfigSchema } from "./config.js";
import { createTavilyProvider } from "./provider.js";

/** Web provider `tavily`: web_search, web_fetch (Markdown extraction) and image_search through `@tavily/core`. */
const tavilyPlugin = defineWebProviderPlugin({
  name: "@antler/tools-tavily",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Web provider `tavily`: web_search, web_fetch and image_search through the Tavily API (@tavily/core).",
  dependsOn: [WEB_TOOLS_PLUGIN_NAME],
  configSchema: tavilyConfigSchema,
  createProvider: (config) => createTavilyProvider(config),
});

export default tavilyPlugin;
