import { definePlugin } from "@antler/kernel";
import { bedrockSettings } from "./settings.js";

/** Model provider `bedrock`: Amazon Bedrock's Converse API, credentials from the standard AWS chain. */
const bedrockPlugin = definePlugin({
  name: "@antler/plugin-bedrock",
  version: "0.1.0",
  kernel: "^0.1.0",
  description:
    "Model provider `bedrock`: Amazon Bedrock Converse and ConverseStream, signed with SigV4 from the standard AWS credential chain.",
  setup(ctx) {
    ctx.models.addProvider({
      id: "bedrock",
      description: "Amazon Bedrock Converse API (/model/{modelId}/converse, /converse-stream over AWS event streams).",
      check: (config, where) => void bedrockSettings(config, where),
      // The AWS SDK and its LangChain wrapper load with the first model built, not with the plugin entry.
      create: async (config, env) => (await import("./model.js")).createBedrockModel(config, env),
    });
  },
});

export default bedrockPlugin;
