import { AntlerError, definePlugin, ErrorCodes, type ModelConfig } from "@antler/kernel";

/** What `antler config check` can tell about an entry without loading the Ollama client. */
function checkOllamaEntry(config: ModelConfig, where: string): void {
  if (config.base_url && /\/v1\/?$/.test(config.base_url)) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" points provider ollama at an OpenAI-compatible /v1 URL`, {
      where: `${where}.base_url`,
      hint: `provider: ollama speaks Ollama's own /api/chat: drop the /v1 (e.g. base_url: http://127.0.0.1:11434), or use provider: openai for the /v1 endpoint.`,
    });
  }
}

/** Model provider `ollama`: Ollama's native chat API. */
const ollamaPlugin = definePlugin({
  name: "@antler/plugin-ollama",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Model provider `ollama`: Ollama's native chat API (/api/chat), with thinking kept as reasoning.",
  setup(ctx) {
    ctx.models.addProvider({
      id: "ollama",
      description: "Ollama's /api/chat (local models; thinking models stream reasoning).",
      check: checkOllamaEntry,
      // The client and its LangChain wrapper load with the first model built, not with the plugin entry.
      create: async (config, env) => (await import("./model.js")).createOllamaModel(config, env),
    });
  },
});

export default ollamaPlugin;
