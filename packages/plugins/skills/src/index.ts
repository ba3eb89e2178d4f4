export {
  SKILLS_CONTAINER_PATH,
  SkillCatalog,
  type SkillCatalogOptions,
  type SkillCategory,
  type SkillIssue,
  type SkillRecord,
  type SkillsView,
  type UserSkillDirs,
} from "./catalog.js";
export { skillsCommands } from "./cli.js";
export {
  type SkillInstallLimits,
  type SkillsSection,
  type SkillsSectionInput,
  skillInstallLimitsSchema,
  skillsConfigSections,
  skillsSectionSchema,
} from "./config.js";
export { isSkillError, type SkillErrorCode, SkillErrorCodes, skillError } from "./errors.js";
export {
  FRONTMATTER_KEYS,
  type ParsedSkillFile,
  parseSkillFile,
  RESERVED_SLASH_WORDS,
  type RequiredSecret,
  type SkillManifest,
  skillNameProblem,
} from "./frontmatter.js";
export { skillsRoutes } from "./http.js";
export { installSkillArchive, removeCustomSkill, type ValidatedSkillArchive, validateSkillArchive } from "./install.js";
export { SKILL_MOUNTS, type SkillMounts } from "./mounts.js";
export { default, PLUGIN_NAME, PLUGIN_VERSION, SKILLS, skillsOf } from "./plugin.js";
export {
  type SkillDeleteResponse,
  type SkillDetailResponse,
  type SkillInstallResponse,
  type SkillResponse,
  type SkillsListResponse,
  skillDeleteResponseSchema,
  skillDetailResponseSchema,
  skillInstallResponseSchema,
  skillIssueSchema,
  skillResponseSchema,
  skillsListResponseSchema,
  skillUpdateRequestSchema,
} from "./schemas.js";
export { type SkillCallOptions, SkillsService } from "./service.js";
