import { defineWebProviderPlugin, WEB_TOOLS_PLUGIN_NAME } from "@antler/tools-web/provider";
import { jinaConfigSchema } from "./config.js";
import { createJinaProvider } from "./provider.js";

/** Web provider `jina`: web_fetch through the Jina Reader (pages rendered and extracted to Markdown by Jina). */
const jinaPlugin = defineWebProviderPlugin({
  name: "@antler/tools-jina",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Web provider `jina`: web_fetch through Jina Reader (r.jina.ai), which renders pages and returns Markdown.",
  dependsOn: [WEB_TOOLS_PLUGIN_NAME],
  configSchema: jinaConfigSchema,
  createProvider: (config) => createJinaProvider(config),
});

export default jinaPlugin;
