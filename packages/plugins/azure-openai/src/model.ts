import { AntlerError, ErrorCodes, type ModelConfig, type ModelProviderEnv } from "@antler/kernel";
import { fetchWithTraceId, withModelErrorContext } from "@antler/model-kit";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AzureChatOpenAI, type AzureOpenAIInput, type ChatOpenAIFields } from "@langchain/openai";
import { azureSettings } from "./settings.js";

type TokenProvider = () => Promise<string>;
const ENTRA_SCOPE = "https://cognitiveservices.azure.com/.default";
// Kept in a variable so the compiler does not look for the optional package.
const AZURE_IDENTITY = "@azure/identity";

interface AzureIdentity {
  DefaultAzureCredential: new () => unknown;
  getBearerTokenProvider(credential: unknown, scope: string): TokenProvider;
}

/** `auth: entra_id` without a token source of the caller's: DefaultAzureCredential from `@azure/identity`, if installed. */
async function entraTokenProvider(config: ModelConfig, where: string): Promise<TokenProvider> {
  let identity: AzureIdentity;
  try {
    identity = (await import(AZURE_IDENTITY)) as AzureIdentity;
  } catch {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" uses Entra ID, and @azure/identity is not installed`, {
      where: `${where}.options.auth`,
      hint: "npm install @azure/identity (its DefaultAzureCredential reads the standard Azure chain), or use api_key.",
    });
  }
  return identity.getBearerTokenProvider(new identity.DefaultAzureCredential(), ENTRA_SCOPE);
}

function failureHint(where: string, auth: "key" | "entra_id"): (error: unknown, status: number | undefined) => string | undefined {
  return (error, status) => {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === "content_filter")
      return "Azure's content filter refused the prompt or the answer; rephrase, or review the deployment's filter.";
    if (status === 401 || status === 403)
      return auth === "key"
        ? `Check ${where}.api_key (or AZURE_OPENAI_API_KEY): it must be a key of the resource at ${where}.base_url.`
        : "The Entra ID token was refused: the identity needs the Cognitive Services OpenAI User role on the resource.";
    if (status === 404)
      return `Check ${where}.options.deployment and ${where}.options.api_version: the resource has no such deployment, or not in this api-version.`;
    if (status === 429)
      return `The deployment is over its tokens- or requests-per-minute quota; raise its quota, slow down, or add ${where}.fallbacks.`;
    if (status !== undefined && status >= 500) return "Azure OpenAI failed or is overloaded; retry later.";
    if (status === undefined) return `Is ${where}.base_url (the resource endpoint) reachable from here?`;
    return undefined;
  };
}

/**
 * Builds the chat model for a `provider: azure-openai` entry: `{base_url}/openai/deployments/{deployment}` with
 * the entry's api-version, authenticated by key (`api-key` header) or Entra ID token (`Authorization: Bearer`).
 * Only the entry and Antler's env are read, never the process's AZURE_OPENAI_* variables behind its back.
 */
export async function createAzureOpenAIModel(
  config: ModelConfig,
  env: ModelProviderEnv,
  tokenProvider?: TokenProvider,
): Promise<BaseChatModel> {
  const where = env.where;
  const settings = azureSettings(config, where);
  const endpoint = (config.base_url ?? env.env.AZURE_OPENAI_ENDPOINT)?.replace(/\/+$/, "");
  if (!endpoint) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" names no Azure OpenAI resource`, {
      where: `${where}.base_url`,
      hint: `Set ${where}.base_url to the resource endpoint (https://<resource>.openai.azure.com) or export AZURE_OPENAI_ENDPOINT.`,
    });
  }
  let entra: TokenProvider | undefined;
  let apiKey: string | undefined;
  if (settings.auth === "entra_id") entra = tokenProvider ?? (await entraTokenProvider(config, where));
  else {
    apiKey = config.api_key ?? env.env.AZURE_OPENAI_API_KEY;
    if (!apiKey) {
      throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" has no Azure OpenAI key`, {
        where: `${where}.api_key`,
        hint: `Set ${where}.api_key (e.g. api_key: $AZURE_OPENAI_API_KEY), export AZURE_OPENAI_API_KEY, or use options.auth: entra_id.`,
      });
    }
  }
  const { configuration: extraConfiguration, modelKwargs, ...extraFields } = settings.rest as Partial<ChatOpenAIFields>;
  const effort = config.supports_thinking ? config.reasoning_effort : undefined;
  const fields: ChatOpenAIFields & Partial<AzureOpenAIInput> = {
    ...extraFields,
    model: config.model ?? settings.deployment,
    azureOpenAIApiDeploymentName: settings.deployment,
    azureOpenAIApiVersion: settings.apiVersion,
    // The base path (not the endpoint) is what the client prefers, so a stray AZURE_OPENAI_BASE_PATH cannot win.
    azureOpenAIBasePath: `${endpoint}/openai/deployments`,
    // Empty, not absent: absent, the client would take AZURE_OPENAI_API_KEY from the process and send it too.
    azureOpenAIApiKey: apiKey ?? "",
    ...(entra ? { azureADTokenProvider: entra } : {}),
    configuration: { ...extraConfiguration, fetch: fetchWithTraceId(extraConfiguration?.fetch ?? globalThis.fetch) },
    streamUsage: true,
    // Azure deployments have names of their own, so the model id may not say "reasoning model": the field goes as is.
    modelKwargs: { ...(effort ? { reasoning_effort: effort } : {}), ...modelKwargs },
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
    ...(config.max_tokens === undefined ? {} : { maxTokens: config.max_tokens }),
    ...(config.timeout_seconds === undefined ? {} : { timeout: config.timeout_seconds * 1000 }),
    ...(config.max_retries === undefined ? {} : { maxRetries: config.max_retries }),
  };
  const model = new AzureChatOpenAI(fields);
  return withModelErrorContext(model, config.name, { where, hint: failureHint(where, settings.auth) });
}
