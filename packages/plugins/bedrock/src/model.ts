import { AntlerError, ErrorCodes, getCurrentTraceId, type ModelConfig, type ModelProviderEnv, stampTraceHeaders } from "@antler/kernel";
import { withModelErrorContext } from "@antler/model-kit";
import { BedrockRuntimeClient, type BedrockRuntimeClientConfig } from "@aws-sdk/client-bedrock-runtime";
import { ChatBedrockConverse, type ChatBedrockConverseInput } from "@langchain/aws";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { bedrockSettings } from "./settings.js";

function failureHint(where: string): (error: unknown, status: number | undefined) => string | undefined {
  return (error, status) => {
    const name = (error as { name?: unknown } | null)?.name;
    if (name === "CredentialsProviderError")
      return "No AWS credentials were found: set AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, AWS_PROFILE, SSO, or run where an instance role applies.";
    if (name === "UnrecognizedClientException" || status === 401)
      return "AWS did not recognise the credentials (the standard chain's access key or session token); check them, or AWS_PROFILE.";
    if (name === "AccessDeniedException" || status === 403)
      return `The identity may not invoke this model: grant bedrock:InvokeModel (and InvokeModelWithResponseStream), and enable the model's access in the Bedrock console for ${where}.options.region.`;
    if (name === "ValidationException" || status === 400)
      return `Bedrock refused the request; check ${where}.model (an id or inference profile available in the region) and ${where}.options.`;
    if (name === "ResourceNotFoundException" || status === 404)
      return `Check ${where}.model: Bedrock does not know this model id in the region.`;
    if (name === "ThrottlingException" || status === 429)
      return `Bedrock is throttling; raise the account's quota, slow down, or add ${where}.fallbacks.`;
    if (status !== undefined && status >= 500) return "Bedrock failed or the model is not ready; retry later.";
    if (status === undefined) return `Is ${where}.base_url (or bedrock-runtime.<region>.amazonaws.com) reachable from here?`;
    return undefined;
  };
}

/** Adds the current trace id to each request before it is signed (so it is signed too). */
function stampTraceIds(client: BedrockRuntimeClient): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      const traceId = getCurrentTraceId();
      const request = args.request as { headers?: Record<string, string> } | undefined;
      if (traceId && request?.headers) for (const [key, value] of stampTraceHeaders(new Headers(), traceId)) request.headers[key] = value;
      return next(args);
    },
    { step: "build", name: "antlerTraceIdHeaders" },
  );
}

/**
 * Builds the chat model for a `provider: bedrock` entry: `ChatBedrockConverse` over a `BedrockRuntimeClient` of the
 * entry's region, whose credentials come from the standard AWS chain (environment, SSO, shared files, container
 * and instance roles), signed with SigV4. Failures become MODEL_CALL_FAILED errors naming the model and trace id.
 */
export function createBedrockModel(config: ModelConfig, env: ModelProviderEnv): BaseChatModel {
  const where = env.where;
  const settings = bedrockSettings(config, where);
  const region = settings.region ?? env.env.AWS_REGION ?? env.env.AWS_DEFAULT_REGION;
  if (!region) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" has no AWS region`, {
      where: `${where}.options.region`,
      hint: `Set ${where}.options.region (e.g. us-east-1) or export AWS_REGION.`,
    });
  }
  if (config.api_key) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" sets api_key, and Bedrock signs with AWS credentials`, {
      where: `${where}.api_key`,
      hint: "Remove api_key; credentials come from the standard AWS chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, SSO, roles).",
    });
  }
  const clientConfig: BedrockRuntimeClientConfig = {
    region,
    ...(settings.profile ? { profile: settings.profile } : {}),
    ...(config.base_url ? { endpoint: config.base_url } : {}),
    // Antler's retry and fallbacks see every attempt; the SDK's own (three by default) would hide them.
    ...(config.max_retries === undefined ? {} : { maxAttempts: config.max_retries + 1 }),
    ...(config.timeout_seconds === undefined ? {} : { requestHandler: { requestTimeout: config.timeout_seconds * 1000 } }),
  };
  const client = new BedrockRuntimeClient(clientConfig);
  stampTraceIds(client);
  const model = new ChatBedrockConverse({
    ...(settings.rest as Partial<ChatBedrockConverseInput>),
    model: settings.modelId,
    region,
    client,
    streamUsage: true,
    ...(settings.additionalModelRequestFields
      ? { additionalModelRequestFields: settings.additionalModelRequestFields as ChatBedrockConverseInput["additionalModelRequestFields"] }
      : {}),
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
    ...(config.max_tokens === undefined ? {} : { maxTokens: config.max_tokens }),
  });
  return withModelErrorContext(model, config.name, { where, hint: failureHint(where) });
}
