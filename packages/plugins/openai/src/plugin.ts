import { definePlugin } from "@antler/kernel";
import { reasoningServerSettings } from "./reasoning-settings.js";

/** Model provider `openai`: OpenAI and OpenAI-compatible Chat Completions endpoints. */
const openaiPlugin = definePlugin({
  name: "@antler/plugin-openai",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Model provider `openai`: OpenAI and any OpenAI-compatible Chat Completions endpoint (vLLM, Ollama, DeepSeek).",
  setup(ctx) {
    ctx.models.addProvider({
      id: "openai",
      description: "OpenAI Chat Completions (or a compatible endpoint via base_url).",
      check: (config, where) => void reasoningServerSettings(config, where),
      // The SDK and its LangChain wrapper load with the first model built, not with the plugin entry.
      create: async (config, env) => (await import("./model.js")).createOpenAIModel(config, env),
    });
  },
});

export default openaiPlugin;
