import { z } from "zod";

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30s`, `10m`, `2h`, `1d` (or a number of seconds) in milliseconds. */
const durationSchema = z.union([z.number().positive(), z.string()]).transform((value, issues) => {
  if (typeof value === "number") return Math.round(value * 1000);
  const match = DURATION.exec(value.trim());
  if (!match) {
    issues.addIssue({ code: "custom", message: `"${value}" is not a duration; write a number with a unit: 30s, 10m, 2h, 1d` });
    return z.NEVER;
  }
  return Math.round(Number(match[1]) * (UNIT_MS[match[2] as string] as number));
});

/** What an unanswered (or unattended) approval becomes. */
const defaultDecisionSchema = z.enum(["approve", "reject"]);

/** One condition on an argument (a dotted path into the call's arguments); every key given must hold. */
const argConditionSchema = z
  .strictObject({
    /** The value is exactly this (compared as JSON). */
    equals: z.unknown().optional(),
    /** The value is one of these. */
    in: z.array(z.unknown()).optional(),
    /** The value, as text, matches this regular expression. */
    matches: z.string().optional(),
    /** The argument is present (true) or absent (false). */
    exists: z.boolean().optional(),
  })
  .superRefine((condition, issues) => {
    if (Object.keys(condition).length === 0) {
      issues.addIssue({ code: "custom", message: "an argument condition needs one of equals, in, matches, exists" });
    }
    if (condition.matches !== undefined) {
      try {
        new RegExp(condition.matches);
      } catch (err) {
        issues.addIssue({ code: "custom", path: ["matches"], message: `not a regular expression: ${(err as Error).message}` });
      }
    }
  });

const ruleSchema = z
  .strictObject({
    /** Names the rule in the pause and in logs; default `rule-<index>`. */
    name: z.string().min(1).optional(),
    /** Tool names this rule covers. */
    tools: z.array(z.string().min(1)).default([]),
    /** Tool groups this rule covers (`bash`, `file:write`, `web`, `mcp`, a `tools:` group, ...); `*` for every tool. */
    groups: z.array(z.string().min(1)).default([]),
    /** `ask`: calls a guardrail provider answers with `ask: true` (allow: false) need approval instead of being denied. */
    guardrail: z.literal("ask").optional(),
    /** Only calls whose arguments meet every condition (by dotted path) need approval. */
    when: z.strictObject({ args: z.record(z.string().min(1), argConditionSchema).default({}) }).optional(),
    /** Why approval is needed, as the person deciding reads it. */
    reason: z.string().min(1).optional(),
    timeout: durationSchema.optional(),
    on_timeout: defaultDecisionSchema.optional(),
    non_interactive: defaultDecisionSchema.optional(),
  })
  .superRefine((rule, issues) => {
    if (rule.tools.length === 0 && rule.groups.length === 0 && rule.guardrail === undefined) {
      issues.addIssue({
        code: "custom",
        path: ["tools"],
        message: "a rule must name tools, groups or guardrail: ask (e.g. tools: [bash] or groups: [file:write])",
      });
    }
  });

/** `approval:` tool calls a person approves, edits or rejects before they run. */
export const approvalSectionSchema = z
  .strictObject({
    /** Default true when rules are given. */
    enabled: z.boolean().optional(),
    /** How long a pause waits by default (`30m`); then `on_timeout` applies. Default 24h. */
    timeout: durationSchema.default(24 * 3_600_000),
    on_timeout: defaultDecisionSchema.default("reject"),
    /** What a run that cannot wait (scheduled) gets for a matching call. */
    non_interactive: defaultDecisionSchema.default("reject"),
    rules: z.array(ruleSchema).default([]),
  })
  .superRefine((section, issues) => {
    if (section.enabled === true && section.rules.length === 0) {
      issues.addIssue({
        code: "custom",
        path: ["rules"],
        message: "approval.enabled is true but no rule is configured; add `rules: [{ tools: [bash] }]`",
      });
    }
  });

export type ApprovalSection = z.output<typeof approvalSectionSchema>;
export type ApprovalRuleConfig = z.output<typeof ruleSchema>;
export type ArgCondition = z.output<typeof argConditionSchema>;

export function approvalSection(config: Readonly<Record<string, unknown>>): ApprovalSection {
  return (config.approval as ApprovalSection | undefined) ?? approvalSectionSchema.parse({});
}

/** Approval is on when rules are given, unless `enabled: false`. */
export function approvalEnabled(section: ApprovalSection): boolean {
  return section.enabled ?? section.rules.length > 0;
}
