import { z } from "zod";
import { approvalSectionSchema } from "./approval-config.js";

const providerEntrySchema = z.strictObject({
  /** A registered provider: `allowlist`, `http`, or one a provider plugin registers. */
  use: z.string().min(1),
  /** The provider's own settings, validated by its schema. */
  config: z.record(z.string(), z.unknown()).default({}),
});

/**
 * `guardrails:` asks policy providers before every tool call. `provider:` (one, DeerFlow's shape) and `providers:`
 * (a list, asked in order until one denies) may not both be set.
 */
export const guardrailsSectionSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** A provider that fails (timeout, non-2xx, bad answer, a throw): true denies the call, false allows it with a warning. */
    fail_closed: z.boolean().default(true),
    provider: providerEntrySchema.optional(),
    providers: z.array(providerEntrySchema).default([]),
  })
  .superRefine((section, issues) => {
    if (section.provider && section.providers.length > 0) {
      issues.addIssue({ code: "custom", path: ["provider"], message: "set either provider (one) or providers (a list), not both" });
    }
    if (section.enabled && !section.provider && section.providers.length === 0) {
      issues.addIssue({
        code: "custom",
        path: ["providers"],
        message:
          "guardrails.enabled is true but no provider is configured; add `providers: [{ use: allowlist, config: { denied_tools: [bash] } }]`",
      });
    }
  });

const roleSchema = z.strictObject({
  /** Tool groups this role may use (`bash`, `file:read`, `file:write`, `web`, `browser`, `mcp`, `acp`, `subagent`, a `tools:` group); `*` for all. */
  tool_groups: z.array(z.string().min(1)).default([]),
  /** `models:` names this role may run on; `*` for all. */
  models: z.array(z.string().min(1)).default([]),
});

/** `authorization:` role-based access: tools and models filtered when the agent is built, and re-checked per call. */
export const authorizationSectionSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** What an error while checking a call means (true: deny). The built-in RBAC does no I/O, so this rarely matters. */
    fail_closed: z.boolean().default(true),
    /** The role of a caller that has none (an API key without `role`, an AntlerClient call without `userRole`). */
    default_role: z.string().min(1).default("user"),
    roles: z.record(z.string().min(1), roleSchema).default({}),
  })
  .superRefine((section, issues) => {
    if (section.enabled && section.roles[section.default_role] === undefined) {
      issues.addIssue({
        code: "custom",
        path: ["default_role"],
        message: `default_role "${section.default_role}" is not one of the roles (${Object.keys(section.roles).join(", ") || "none configured"}); add it under authorization.roles`,
      });
    }
  });

export type GuardrailsSection = z.output<typeof guardrailsSectionSchema>;
export type AuthorizationSection = z.output<typeof authorizationSectionSchema>;
export type RoleConfig = z.output<typeof roleSchema>;

export const guardrailsConfigSections = {
  approval: approvalSectionSchema.default(approvalSectionSchema.parse({})),
  guardrails: guardrailsSectionSchema.default(guardrailsSectionSchema.parse({})),
  authorization: authorizationSectionSchema.default(authorizationSectionSchema.parse({})),
};

export function guardrailsSection(config: Readonly<Record<string, unknown>>): GuardrailsSection {
  return (config.guardrails as GuardrailsSection | undefined) ?? guardrailsSectionSchema.parse({});
}

export function authorizationSection(config: Readonly<Record<string, unknown>>): AuthorizationSection {
  return (config.authorization as AuthorizationSection | undefined) ?? authorizationSectionSchema.parse({});
}
