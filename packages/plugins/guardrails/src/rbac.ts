import type { ToolEntry } from "@antler/kernel";
import type { AuthorizationSection } from "./config.js";
import type { GuardrailDecision, GuardrailProvider, GuardrailRequest } from "./contract.js";

/** Groups RBAC gives ungrouped tools by where they came from; other ungrouped tools are framework tools, always allowed. */
const SOURCE_GROUPS: Readonly<Record<string, string>> = Object.freeze({ mcp: "mcp", acp: "acp", subagent: "subagent" });

/** The group RBAC judges a tool by: its own, else `mcp`/`acp`/`subagent` by source, else none (a framework tool). */
export function rbacGroupOf(entry: Pick<ToolEntry, "group" | "source">): string | null {
  return entry.group ?? SOURCE_GROUPS[entry.source] ?? null;
}

const WILDCARD = "*";

/** Role-based access from `authorization:`: which tool groups and models each role may use. */
export class RolePolicy {
  constructor(private readonly section: AuthorizationSection) {}

  /** The role a caller acts with: the one given, else `default_role`. */
  roleOf(userRole: string | null | undefined): string {
    return typeof userRole === "string" && userRole !== "" ? userRole : this.section.default_role;
  }

  knows(role: string): boolean {
    return Object.hasOwn(this.section.roles, role);
  }

  roleNames(): string[] {
    return Object.keys(this.section.roles);
  }

  /** An unknown role may use nothing. */
  allowsGroup(role: string, group: string): boolean {
    const groups = this.knows(role) ? (this.section.roles[role]?.tool_groups ?? []) : [];
    return groups.includes(WILDCARD) || groups.includes(group);
  }

  allowsModel(role: string, model: string): boolean {
    const models = this.knows(role) ? (this.section.roles[role]?.models ?? []) : [];
    return models.includes(WILDCARD) || models.includes(model);
  }

  modelsOf(role: string): readonly string[] {
    return this.section.roles[role]?.models ?? [];
  }

  toolGroupsOf(role: string): readonly string[] {
    return this.section.roles[role]?.tool_groups ?? [];
  }

  /** Layer 1: keeps the entries the role may use (framework tools always stay). */
  filterTools(entries: readonly ToolEntry[], role: string): ToolEntry[] {
    return entries.filter((entry) => {
      const group = rbacGroupOf(entry);
      return group === null || this.allowsGroup(role, group);
    });
  }
}

/**
 * How RBAC learns a tool's group at call time: the group recorded when the tool was assembled (a string), a
 * framework tool (null), or a name never assembled nor bound (undefined).
 */
export type ToolGroupLookup = (toolName: string) => string | null | undefined;

/** Layer 2: the role policy re-checked for each call, as a guardrail provider (asked before the configured ones). */
export function rbacProvider(policy: RolePolicy, groupOf: ToolGroupLookup): GuardrailProvider {
  const deny = (code: string, message: string): GuardrailDecision => ({ allow: false, reasons: [{ code, message }], policy_id: "rbac" });
  return {
    name: "rbac",
    evaluate(request: GuardrailRequest): GuardrailDecision {
      const role = policy.roleOf(request.user_role);
      if (!policy.knows(role)) {
        return deny("role_unknown", `role "${role}" is not configured under authorization.roles, so it may use no tools.`);
      }
      const group = groupOf(request.tool_name);
      if (group === undefined) {
        return deny("tool_unknown", "no such tool was offered to this agent; use only the tools you were given.");
      }
      if (group !== null && !policy.allowsGroup(role, group)) {
        const allowed = policy.toolGroupsOf(role);
        return deny(
          "role_forbids_tool_group",
          `role "${role}" may not use tools of group "${group}" (allowed groups: ${allowed.join(", ") || "none"}).`,
        );
      }
      return { allow: true, reasons: [], policy_id: "rbac" };
    },
  };
}
