import { defineWebProviderPlugin, WEB_TOOLS_PLUGIN_NAME } from "@antler/tools-web/provider";
import { firecrawlConfigSchema } from "./config.js";
import { createFirecrawlProvider } from "./provider.js";

/** Web provider `firecrawl`: web_search, web_fetch (scrape to Markdown) and image_search through `@mendable/firecrawl-js`. */
const firecrawlPlugin = defineWebProviderPlugin({
  name: "@antler/tools-firecrawl",
  version: "0.1.0",
  kernel: "^0.1.0",
  description:
    "Web provider `firecrawl`: web_search, web_fetch (scrape to Markdown) and image_search through Firecrawl (cloud or self-hosted).",
  dependsOn: [WEB_TOOLS_PLUGIN_NAME],
  configSchema: firecrawlConfigSchema,
  createProvider: (config) => createFirecrawlProvider(config),
});

export default firecrawlPlugin;
