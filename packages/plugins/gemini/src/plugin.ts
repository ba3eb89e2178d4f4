import { definePlugin } from "@antler/kernel";

/** Model provider `gemini`: the Gemini API (generateContent / streamGenerateContent). */
const geminiPlugin = definePlugin({
  name: "@antler/plugin-gemini",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Model provider `gemini`: Google's Gemini API, with thoughts streamed as reasoning and signatures kept across turns.",
  setup(ctx) {
    ctx.models.addProvider({
      id: "gemini",
      description: "Google Gemini API (generateContent, streamGenerateContent over SSE).",
      // The client and its LangChain wrapper load with the first model built, not with the plugin entry.
      create: async (config, env) => (await import("./model.js")).createGeminiModel(config, env),
    });
  },
});

export default geminiPlugin;
