import { z } from "zod";
import type { SkillIssue, SkillRecord } from "./catalog.js";

/** One skill over HTTP and from `SkillsClient` (DeerFlow's SkillResponse, plus where it lives and its policy). */
export const skillResponseSchema = z.object({
  name: z.string(),
  description: z.string(),
  license: z.string().nullable(),
  category: z.enum(["public", "custom"]),
  enabled: z.boolean(),
  location: z.string(),
  allowed_tools: z.array(z.string()).nullable(),
  version: z.string().nullable(),
  author: z.string().nullable(),
});
export type SkillResponse = z.output<typeof skillResponseSchema>;

/** `GET /api/skills/{name}`: the skill and its SKILL.md body. */
export const skillDetailResponseSchema = skillResponseSchema.extend({ body: z.string() });
export type SkillDetailResponse = z.output<typeof skillDetailResponseSchema>;

export const skillIssueSchema = z.object({
  category: z.enum(["public", "custom"]),
  folder: z.string(),
  location: z.string(),
  message: z.string(),
});

/** `GET /api/skills` (DeerFlow's SkillsListResponse, plus the skill folders that could not be used). */
export const skillsListResponseSchema = z.object({
  skills: z.array(skillResponseSchema),
  issues: z.array(skillIssueSchema),
});
export type SkillsListResponse = z.output<typeof skillsListResponseSchema>;

/** `POST /api/skills/install` (DeerFlow's SkillInstallResponse, plus the installed skill). */
export const skillInstallResponseSchema = z.object({
  success: z.literal(true),
  skill_name: z.string(),
  message: z.string(),
  skill: skillResponseSchema,
});
export type SkillInstallResponse = z.output<typeof skillInstallResponseSchema>;

/** `DELETE /api/skills/custom/{name}`. */
export const skillDeleteResponseSchema = z.object({ success: z.literal(true), skill_name: z.string() });
export type SkillDeleteResponse = z.output<typeof skillDeleteResponseSchema>;

/** `PUT /api/skills/{name}` body. */
export const skillUpdateRequestSchema = z.strictObject({ enabled: z.boolean() });

export function skillResponse(skill: SkillRecord): SkillResponse {
  return {
    name: skill.name,
    description: skill.description,
    license: skill.license ?? null,
    category: skill.category,
    enabled: skill.enabled,
    location: skill.location,
    allowed_tools: skill.allowedTools ? [...skill.allowedTools] : null,
    version: skill.version ?? null,
    author: skill.author ?? null,
  };
}

export function skillIssue(issue: SkillIssue): z.output<typeof skillIssueSchema> {
  return { category: issue.category, folder: issue.folder, location: issue.location, message: issue.message };
}
