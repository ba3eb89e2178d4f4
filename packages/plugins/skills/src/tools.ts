import { DEFAULT_USER_ID } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { z } from "zod";
import type { SkillCatalog } from "./catalog.js";
import { visibleSkills } from "./middleware.js";

/**
 * `describe_skill(name)`, offered with `skills.deferred_discovery`: the prompt lists only names, and the model asks
 * for a skill's description, policy and SKILL.md location when a name looks relevant.
 */
export function describeSkillTool(catalog: SkillCatalog, allowlist: () => ReadonlySet<string> | undefined) {
  return defineTool({
    name: "describe_skill",
    description:
      "Describe one skill from the <skill_index>: what it is for, which tools it allows, and the path of its SKILL.md " +
      "(read that with read_file to use the skill).",
    schema: z.object({ name: z.string().describe("A skill name from <skill_index>.") }),
    run({ name }, runtime) {
      const userId = (runtime as { context?: { user_id?: string } }).context?.user_id ?? DEFAULT_USER_ID;
      const skills = visibleSkills(catalog.view(userId), allowlist());
      const skill = skills.find((s) => s.name === name);
      if (!skill) {
        return `Error: no skill named ${JSON.stringify(name)}. Available: ${skills.map((s) => s.name).join(", ") || "none"}.`;
      }
      return [
        `name: ${skill.name}`,
        `description: ${skill.description}`,
        `location: ${skill.location}`,
        ...(skill.allowedTools ? [`allowed-tools: ${skill.allowedTools.join(", ") || "(none)"}`] : []),
        "Read the SKILL.md at this location with read_file before following the skill.",
      ].join("\n");
    },
  });
}
