import { definePlugin } from "@antler/kernel";
import { toolSearchConfigSections, toolSearchSection } from "./config.js";
import type { CatalogRegistry } from "./registry.js";

export const PLUGIN_NAME = "@antler/plugin-tool-search";
export const PLUGIN_VERSION = "0.1.0";

export default definePlugin({
  name: PLUGIN_NAME,
  version: PLUGIN_VERSION,
  kernel: "^0.1.0",
  description: "Deferred tools: MCP (and chosen) tool schemas stay out of the prompt until tool_search loads them for the thread.",
  configSections: toolSearchConfigSections,
  setup(ctx) {
    const section = toolSearchSection(ctx.kernelConfig);
    if (!section.enabled) return;
    // Loaded on the first assembly: the registry builds LangChain tools, which this entry must not import.
    let pending: Promise<CatalogRegistry> | undefined;
    const registry = (): Promise<CatalogRegistry> =>
      (pending ??= import("./registry.js").then(({ CatalogRegistry }) => new CatalogRegistry(section)));
    ctx.hooks.assembleTools.tap(
      async (entries, context) => {
        const added = (await registry()).assemble(entries, context);
        return added ? [...entries, ...added] : entries;
      },
      { stage: "last" },
    );
    ctx.middleware.add(
      {
        name: "tool-search",
        create: async () => {
          const { toolSearchMiddleware } = await import("./middleware.js");
          return toolSearchMiddleware({ registry: await registry(), autoPromoteTopK: section.auto_promote_top_k });
        },
      },
      { stage: "late" },
    );
  },
});
