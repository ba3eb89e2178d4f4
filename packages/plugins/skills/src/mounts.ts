import type { Token } from "@antler/kernel";

/**
 * Host folders behind a user's read-only `/mnt/skills/{public,custom}`. The skills plugin provides it; sandbox
 * providers resolve it when they set a sandbox up. The key is a registry symbol, so a provider can declare the
 * same token without depending on this package (`Symbol.for("@antler/sandbox/skill-mounts")`).
 */
export interface SkillMounts {
  hostDirs(userId: string): { public: string; custom: string };
}

export const SKILL_MOUNTS: Token<SkillMounts> = Object.freeze({
  key: Symbol.for("@antler/sandbox/skill-mounts"),
  name: "sandbox.skill-mounts",
});
