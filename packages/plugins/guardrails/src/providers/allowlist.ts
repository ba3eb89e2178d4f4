import { z } from "zod";
import type { GuardrailDecision, GuardrailProviderFactory } from "../contract.js";

export const allowlistConfigSchema = z
  .strictObject({
    /** Only these tools may run (omitted: every tool not denied). */
    allowed_tools: z.array(z.string().min(1)).optional(),
    /** These tools never run; a name on both lists is denied. */
    denied_tools: z.array(z.string().min(1)).default([]),
    /** Reported as the decision's `policy_id`. */
    policy_id: z.string().min(1).default("allowlist"),
  })
  .refine((c) => c.allowed_tools !== undefined || c.denied_tools.length > 0, {
    message: "the allowlist provider needs allowed_tools, denied_tools, or both",
  });

/** `use: allowlist`: a fixed allowlist and denylist of tool names from config. */
export const allowlistProviderFactory: GuardrailProviderFactory<typeof allowlistConfigSchema> = {
  use: "allowlist",
  configSchema: allowlistConfigSchema,
  create(config) {
    const allowed = config.allowed_tools ? new Set(config.allowed_tools) : undefined;
    const denied = new Set(config.denied_tools);
    const policy_id = config.policy_id;
    return {
      name: "allowlist",
      evaluate(request): GuardrailDecision {
        if (denied.has(request.tool_name)) {
          return {
            allow: false,
            policy_id,
            reasons: [{ code: "tool_denylisted", message: "the tool is on the guardrails denylist (denied_tools)." }],
          };
        }
        if (allowed && !allowed.has(request.tool_name)) {
          return {
            allow: false,
            policy_id,
            reasons: [
              {
                code: "tool_not_allowlisted",
                message: `the tool is not on the guardrails allowlist (allowed: ${[...allowed].join(", ") || "none"}).`,
              },
            ],
          };
        }
        return { allow: true, reasons: [], policy_id };
      },
    };
  },
};
