import { AntlerError, ErrorCodes, type ModelConfig } from "@antler/kernel";
import { z } from "zod";

/** The GA api-version used when an entry names none (reasoning_effort needs a newer one, e.g. 2025-04-01-preview). */
export const DEFAULT_API_VERSION = "2024-10-21";

const azureOptionsSchema = z.looseObject({
  deployment: z.string().min(1).optional(),
  api_version: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}(-preview)?$/, "must look like 2024-10-21 or 2025-04-01-preview")
    .optional(),
  auth: z.enum(["key", "entra_id"]).optional(),
});

/** What an `azure-openai` entry resolves to, before any client is loaded (so `config check` can run it). */
export interface AzureSettings {
  readonly deployment: string;
  readonly apiVersion: string;
  readonly auth: "key" | "entra_id";
  /** The options left for the LangChain model's own fields. */
  readonly rest: Record<string, unknown>;
}

/** Reads and checks the Azure keys of an entry's `options`; throws CONFIG_INVALID naming the key. */
export function azureSettings(config: ModelConfig, where: string): AzureSettings {
  const parsed = azureOptionsSchema.safeParse(config.options ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue?.path.join(".") ?? "";
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}": options.${key} ${issue?.message ?? "is invalid"}`, {
      where: `${where}.options.${key}`,
      hint: "options.deployment is the Azure deployment name, options.api_version an Azure OpenAI api-version, options.auth key or entra_id.",
    });
  }
  const { deployment, api_version, auth, ...rest } = parsed.data;
  const name = deployment ?? config.model;
  if (!name) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" names no Azure deployment`, {
      where: `${where}.options.deployment`,
      hint: "Set options.deployment to the deployment's name in the Azure portal (or model: when they are the same).",
    });
  }
  return { deployment: name, apiVersion: api_version ?? DEFAULT_API_VERSION, auth: auth ?? "key", rest };
}
