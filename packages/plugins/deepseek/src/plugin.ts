import { AntlerError, definePlugin, ErrorCodes, type ModelConfig } from "@antler/kernel";

/** What `antler config check` can tell about an entry without loading the client. */
function checkDeepSeekEntry(config: ModelConfig, where: string): void {
  if (config.supports_vision) {
    throw new AntlerError(
      ErrorCodes.CONFIG_INVALID,
      `model "${config.name}" declares supports_vision, but DeepSeek's chat API takes no images`,
      {
        where: `${where}.supports_vision`,
        hint: "Remove supports_vision (or set it to false); use a vision model from another provider for images.",
      },
    );
  }
}

/** Model provider `deepseek`: DeepSeek's chat API, reasoning kept and sent back as DeepSeek requires. */
const deepseekPlugin = definePlugin({
  name: "@antler/plugin-deepseek",
  version: "0.1.0",
  kernel: "^0.1.0",
  description:
    "Model provider `deepseek`: DeepSeek's chat API, with reasoning_content streamed as reasoning and sent back as DeepSeek requires.",
  setup(ctx) {
    ctx.models.addProvider({
      id: "deepseek",
      description: "DeepSeek Chat Completions (deepseek-chat, deepseek-reasoner).",
      check: checkDeepSeekEntry,
      // The SDK and its LangChain wrapper load with the first model built, not with the plugin entry.
      create: async (config, env) => (await import("./model.js")).createDeepSeekModel(config, env),
    });
  },
});

export default deepseekPlugin;
