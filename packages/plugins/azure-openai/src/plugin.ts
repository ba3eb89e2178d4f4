import { definePlugin, type ModelConfig } from "@antler/kernel";
import { azureSettings } from "./settings.js";

export interface AzureOpenAIPluginOptions {
  /**
   * A Microsoft Entra ID token source for every model of this plugin (e.g. `getBearerTokenProvider(credential,
   * "https://cognitiveservices.azure.com/.default")` from `@azure/identity`). Called before each request; its token
   * goes as `Authorization: Bearer`, and no key is sent.
   */
  readonly tokenProvider?: () => Promise<string>;
}

/** The `azure-openai` model provider plugin, with an Entra ID token source of the caller's when given. */
export function createAzureOpenAIPlugin(options: AzureOpenAIPluginOptions = {}) {
  return definePlugin({
    name: "@antler/plugin-azure-openai",
    version: "0.1.0",
    kernel: "^0.1.0",
    description: "Model provider `azure-openai`: Azure OpenAI deployments (api-version, key or Entra ID token).",
    setup(ctx) {
      ctx.models.addProvider({
        id: "azure-openai",
        description: "Azure OpenAI Chat Completions on a deployment (/openai/deployments/{deployment}/chat/completions?api-version=…).",
        check: (config: ModelConfig, where: string) => void azureSettings(config, where),
        // The SDK and its LangChain wrapper load with the first model built, not with the plugin entry.
        create: async (config, env) => (await import("./model.js")).createAzureOpenAIModel(config, env, options.tokenProvider),
      });
    },
  });
}

/** Model provider `azure-openai`, with `api_key` or `options.auth: entra_id` (`@azure/identity`). */
const azureOpenAIPlugin = createAzureOpenAIPlugin();

export default azureOpenAIPlugin;
