import { defineWebProviderPlugin } from "@antler/tools-web/provider";
import { infoquestConfigSchema } from "./config.js";
import { createInfoquestProvider } from "./provider.js";

export const INFOQUEST_PLUGIN_NAME = "@antler/tools-infoquest";

/** Registers the web provider `infoquest` (search, images and fetch) for `@antler/tools-web`. */
export const infoquestToolsPlugin = defineWebProviderPlugin({
  name: INFOQUEST_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Web provider `infoquest`: web_search, image_search and web_fetch through BytePlus InfoQuest.",
  configSchema: infoquestConfigSchema,
  // The key is read per call, not here, so a kernel that never searches boots without one.
  createProvider: (config, ctx) => createInfoquestProvider(config, { where: `plugins[${ctx.plugin.name}].config.api_key` }),
});

export default infoquestToolsPlugin;
