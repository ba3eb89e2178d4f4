import { defineWebProviderPlugin } from "@antler/tools-web/provider";
import { tencentWsaConfigSchema } from "./config.js";
import { createTencentWsaProvider } from "./provider.js";

export const TENCENT_WSA_PLUGIN_NAME = "@antler/tools-tencent-wsa";

/** Registers the web provider `tencent-wsa` (search) for `@antler/tools-web`. */
export const tencentWsaToolsPlugin = defineWebProviderPlugin({
  name: TENCENT_WSA_PLUGIN_NAME,
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Web provider `tencent-wsa`: web_search through Tencent Cloud Web Search (SearchPro), strong on Chinese sources.",
  configSchema: tencentWsaConfigSchema,
  // The key is read per call, not here, so a kernel that never searches boots without one.
  createProvider: (config, ctx) => createTencentWsaProvider(config, { where: `plugins[${ctx.plugin.name}].config.api_key` }),
});

export default tencentWsaToolsPlugin;
