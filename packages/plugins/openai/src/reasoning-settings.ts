import { AntlerError, ErrorCodes, type ModelConfig } from "@antler/kernel";

const REASONING_FIELDS = ["reasoning_content", "reasoning"] as const;
const PASSBACKS = ["none", "tool_turns", "all"] as const;

/** The reasoning-server settings of an entry (`options.reasoning_field`, `options.reasoning_passback`), checked. */
export function reasoningServerSettings(
  config: ModelConfig,
  where: string,
): { field: (typeof REASONING_FIELDS)[number]; passback: (typeof PASSBACKS)[number] } | undefined {
  const { reasoning_field: field, reasoning_passback: passback } = (config.options ?? {}) as Record<string, unknown>;
  if (field === undefined && passback === undefined) return undefined;
  const bad = (key: string, value: unknown, allowed: readonly string[]) =>
    new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" sets options.${key} to ${JSON.stringify(value)}`, {
      where: `${where}.options.${key}`,
      hint: `Use one of: ${allowed.join(", ")}.`,
    });
  if (field !== undefined && !REASONING_FIELDS.includes(field as never)) throw bad("reasoning_field", field, REASONING_FIELDS);
  if (passback !== undefined && !PASSBACKS.includes(passback as never)) throw bad("reasoning_passback", passback, PASSBACKS);
  if (!config.supports_thinking) {
    const key = field === undefined ? "reasoning_passback" : "reasoning_field";
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `model "${config.name}" sets options.${key} but does not declare supports_thinking`, {
      where: `${where}.options.${key}`,
      hint: `Add supports_thinking: true to ${where} if the server's model reasons, or remove options.${key}.`,
    });
  }
  return {
    field: (field ?? "reasoning_content") as (typeof REASONING_FIELDS)[number],
    passback: (passback ?? "none") as (typeof PASSBACKS)[number],
  };
}
