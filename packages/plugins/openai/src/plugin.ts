import { definePlugin } from "@antler/kernel";
import { PRESETS, presetEffortFields } from "./presets.js";
import { reasoningServerSettings } from "./reasoning-settings.js";

/** Model provider `openai`: OpenAI and OpenAI-compatible Chat Completions endpoints. */
const openaiPlugin = definePlugin({
  name: "@antler/plugin-openai",
  version: "0.1.0",
  kernel: "^0.1.0",
  description:
    "Model providers `openai` (OpenAI and any OpenAI-compatible Chat Completions endpoint: vLLM, Ollama, DeepSeek) and `mistral`, `groq`, `xai` (those vendors' Chat Completions APIs).",
  setup(ctx) {
    ctx.models.addProvider({
      id: "openai",
      description: "OpenAI Chat Completions (or a compatible endpoint via base_url).",
      check: (config, where) => void reasoningServerSettings(config, where),
      // The SDK and its LangChain wrapper load with the first model built, not with the plugin entry.
      create: async (config, env) => (await import("./model.js")).createOpenAIModel(config, env),
    });
    // Vendors whose API is Chat Completions at their own URL: the same client, their URL, key and reasoning knob.
    for (const preset of PRESETS) {
      ctx.models.addProvider({
        id: preset.id,
        description: `${preset.vendor} Chat Completions (${preset.baseUrl}), on the openai client.`,
        check: (config, where) => {
          reasoningServerSettings(config, where);
          presetEffortFields(preset, config, where);
        },
        create: async (config, env) => (await import("./model.js")).createOpenAIModel(config, env, preset),
      });
    }
  },
});

export default openaiPlugin;
