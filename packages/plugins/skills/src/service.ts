import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { DEFAULT_USER_ID } from "@antler/kernel";
import type { SkillCatalog } from "./catalog.js";
import type { SkillInstallLimits } from "./config.js";
import { SkillErrorCodes, skillError } from "./errors.js";
import { installSkillArchive, removeCustomSkill } from "./install.js";
import {
  type SkillDeleteResponse,
  type SkillDetailResponse,
  type SkillInstallResponse,
  type SkillResponse,
  type SkillsListResponse,
  skillIssue,
  skillResponse,
} from "./schemas.js";

export interface SkillCallOptions {
  /** Acts for this user; another user's custom skills are "not found". Default "default". */
  userId?: string | undefined;
}

/**
 * The skills API in process: what the CLI, the gateway routes and embedding code call. Every answer has the
 * shape of the gateway's response schemas, so the in-process and HTTP answers are the same JSON.
 */
export class SkillsService {
  constructor(
    readonly catalog: SkillCatalog,
    readonly limits: SkillInstallLimits,
  ) {}

  private user(options?: SkillCallOptions): string {
    return options?.userId ?? DEFAULT_USER_ID;
  }

  listSkills(options: SkillCallOptions & { enabledOnly?: boolean } = {}): SkillsListResponse {
    const view = this.catalog.view(this.user(options));
    const skills = options.enabledOnly ? view.enabled : view.skills;
    return { skills: skills.map(skillResponse), issues: view.issues.map(skillIssue) };
  }

  getSkill(name: string, options: SkillCallOptions = {}): SkillDetailResponse {
    const skill = this.catalog.require(this.user(options), name);
    return { ...skillResponse(skill), body: this.catalog.readBody(skill) };
  }

  updateSkill(name: string, update: { enabled: boolean }, options: SkillCallOptions = {}): SkillResponse {
    return skillResponse(this.catalog.setEnabled(this.user(options), name, update.enabled));
  }

  /** Installs a `.skill` archive given as bytes or as a path to a file. */
  async installSkill(archive: Uint8Array | string, options: SkillCallOptions = {}): Promise<SkillInstallResponse> {
    const bytes = typeof archive === "string" ? await readArchiveFile(archive, this.limits) : archive;
    const skill = await installSkillArchive(this.catalog, this.user(options), bytes, this.limits);
    return {
      success: true,
      skill_name: skill.name,
      message: `Installed skill "${skill.name}" at ${skill.location}.`,
      skill: skillResponse(skill),
    };
  }

  removeSkill(name: string, options: SkillCallOptions = {}): SkillDeleteResponse {
    const skill = removeCustomSkill(this.catalog, this.user(options), name);
    return { success: true, skill_name: skill.name };
  }

  /** Re-reads every skill folder (after SKILL.md files were edited in place). */
  reloadSkills(options: SkillCallOptions = {}): SkillsListResponse {
    this.catalog.reload();
    return this.listSkills(options);
  }
}

async function readArchiveFile(path: string, limits: SkillInstallLimits): Promise<Uint8Array> {
  const file = resolve(path);
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) {
    throw skillError(SkillErrorCodes.ARCHIVE_REFUSED, `${file} is not a file`, {
      where: "skill archive",
      hint: "Give the path of a .skill file (a ZIP of the skill folder).",
    });
  }
  if (info.size > limits.max_archive_bytes) {
    throw skillError(
      SkillErrorCodes.ARCHIVE_REFUSED,
      `the archive is ${info.size} bytes, over the ${limits.max_archive_bytes}-byte limit`,
      {
        where: "skill archive",
        hint: "Make the skill smaller, or raise skills.install.max_archive_bytes. Nothing was installed.",
      },
    );
  }
  return readFile(file);
}
