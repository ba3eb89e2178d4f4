import { defineWebProviderPlugin } from "@antler/tools-web/provider";
import { crawl4aiConfigSchema } from "./config.js";
import { createCrawl4aiProvider } from "./provider.js";

export const CRAWL4AI_PLUGIN_NAME = "@antler/tools-crawl4ai";

/** Registers the web provider `crawl4ai` (fetch) for `@antler/tools-web`. */
export const crawl4aiToolsPlugin = defineWebProviderPlugin({
  name: CRAWL4AI_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Web provider `crawl4ai`: web_fetch to Markdown through a self-hosted Crawl4AI server (browser-rendered pages).",
  configSchema: crawl4aiConfigSchema,
  createProvider: (config) => createCrawl4aiProvider(config),
});

export default crawl4aiToolsPlugin;
