import { definePlugin } from "@antler/kernel";

/** Model provider `anthropic`: Claude models through Anthropic's Messages API. */
const anthropicPlugin = definePlugin({
  name: "@antler/plugin-anthropic",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Model provider `anthropic`: Claude models through Anthropic's Messages API.",
  setup(ctx) {
    ctx.models.addProvider({
      id: "anthropic",
      description: "Anthropic Messages API (Claude).",
      // The SDK and its LangChain wrapper load with the first model built, not with the plugin entry.
      create: async (config, env) => (await import("./model.js")).createAnthropicModel(config, env),
    });
  },
});

export default anthropicPlugin;
