import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { assertSafeId, isAntlerError, type Logger } from "@antler/kernel";
import { SkillErrorCodes, skillError } from "./errors.js";
import { parseSkillFile, type SkillManifest } from "./frontmatter.js";

/** Where skills appear inside every sandbox, read-only. */
export const SKILLS_CONTAINER_PATH = "/mnt/skills";

export type SkillCategory = "public" | "custom";

/** One usable skill as a user sees it. */
export interface SkillRecord extends SkillManifest {
  category: SkillCategory;
  /** SKILL.md as the model reads it: `/mnt/skills/<category>/<name>/SKILL.md`. */
  location: string;
  /** The skill's folder on this host. */
  hostDir: string;
  enabled: boolean;
}

/** A skill folder that could not be used, and why. Reported by `list`, never fatal. */
export interface SkillIssue {
  category: SkillCategory;
  folder: string;
  location: string;
  message: string;
}

export interface SkillsView {
  /** Every usable skill, enabled or not, sorted by name; public skills first on a name clash. */
  readonly skills: readonly SkillRecord[];
  readonly enabled: readonly SkillRecord[];
  readonly issues: readonly SkillIssue[];
  get(name: string): SkillRecord | undefined;
  /** Per-view memo for derived text (the prompt section): dropped with the view when skills change. */
  readonly memo: Map<string, unknown>;
}

export interface SkillCatalogOptions {
  /** Folder of the distribution's public skills (`<skills.path>/public`). */
  publicDir: string;
  /** Antler's data folder; custom skills live under `<baseDir>/users/<user>/skills/custom`. */
  baseDir: string;
  /** `skills.disabled`: off unless a user enables them. */
  disabledByDefault?: readonly string[];
  logger?: Pick<Logger, "warn"> | undefined;
}

export interface UserSkillDirs {
  /** `<baseDir>/users/<user>/skills`: state file and install staging. */
  root: string;
  /** `<root>/custom`: one folder per installed skill. */
  custom: string;
  /** Per-user enable/disable overrides. */
  stateFile: string;
}

interface ParsedFolder {
  stamp: number;
  skills: Array<Omit<SkillRecord, "enabled">>;
  issues: SkillIssue[];
}

interface CachedView {
  stamp: string;
  view: SkillsView;
  /** The catalog's generation and the clock when the stamp was last compared with the folders. */
  generation: number;
  checkedAt: number;
}

const MAX_CACHED_USERS = 256;

function mtimeOf(path: string): number {
  return statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0;
}

/**
 * The skills index. Each folder is parsed once and kept until its folder's mtime changes (an install, a removal
 * or a state change through this catalog drops it at once); a turn costs a few `stat` calls, never a parse.
 * Edits inside an existing skill's folder are picked up by `reload()` (`antler skills list --reload`,
 * `POST /api/skills/reload`).
 */
export class SkillCatalog {
  readonly publicDir: string;
  readonly baseDir: string;
  private readonly disabledByDefault: ReadonlySet<string>;
  private readonly logger: Pick<Logger, "warn"> | undefined;
  private publicFolder: ParsedFolder | undefined;
  private readonly customFolders = new Map<string, ParsedFolder>();
  private readonly views = new Map<string, CachedView>();
  /** Each recent user's folders, so a turn's `view` joins no paths. */
  private readonly dirs = new Map<string, Readonly<UserSkillDirs>>();
  /** Bumped by every change made through the catalog; part of each view's stamp. */
  private generation = 0;
  private readonly listeners = new Set<(userId: string | undefined) => void>();

  constructor(options: SkillCatalogOptions) {
    this.publicDir = resolve(options.publicDir);
    this.baseDir = resolve(options.baseDir);
    this.disabledByDefault = new Set(options.disabledByDefault ?? []);
    this.logger = options.logger;
  }

  /** Called after every change (install, remove, enable, disable, reload); the plugin drops cached agents here. */
  onChange(listener: (userId: string | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  userDirs(userId: string): UserSkillDirs {
    const known = this.dirs.get(userId);
    if (known) return known;
    const root = join(this.baseDir, "users", assertSafeId("user", userId), "skills");
    const dirs = { root, custom: join(root, "custom"), stateFile: join(root, "state.json") };
    if (this.dirs.size >= MAX_CACHED_USERS) this.dirs.delete(this.dirs.keys().next().value as string);
    this.dirs.set(userId, dirs);
    return dirs;
  }

  /**
   * What `userId` sees: public skills and their own custom ones, each with its effective enabled state. With
   * `maxAgeMs`, the folders are not looked at again within that time of the last look, unless a change was made
   * through this catalog since (the prompt's per-turn path: edits on disk by another process show within it).
   */
  view(userId: string, maxAgeMs = 0): SkillsView {
    const cached = this.views.get(userId);
    const now = Date.now();
    if (cached && cached.generation === this.generation && now - cached.checkedAt < maxAgeMs) return cached.view;
    const dirs = this.userDirs(userId);
    const publicStamp = mtimeOf(this.publicDir);
    const customStamp = mtimeOf(dirs.custom);
    const stateStamp = mtimeOf(dirs.stateFile);
    const stamp = `${this.generation}:${publicStamp}:${customStamp}:${stateStamp}`;
    if (cached?.stamp === stamp) {
      cached.checkedAt = now;
      return cached.view;
    }
    if (this.publicFolder?.stamp !== publicStamp) this.publicFolder = this.parseFolder(this.publicDir, "public", publicStamp);
    let custom = this.customFolders.get(userId);
    if (custom?.stamp !== customStamp) {
      custom = this.parseFolder(dirs.custom, "custom", customStamp);
      this.customFolders.set(userId, custom);
    }
    const overrides = this.readState(dirs.stateFile);
    const byName = new Map<string, SkillRecord>();
    const issues = [...this.publicFolder.issues, ...custom.issues];
    for (const skill of [...this.publicFolder.skills, ...custom.skills]) {
      if (byName.has(skill.name)) {
        issues.push({
          category: skill.category,
          folder: skill.name,
          location: skill.location,
          message: `a ${byName.get(skill.name)?.category} skill named "${skill.name}" already exists; this one is ignored`,
        });
        continue;
      }
      const enabled = overrides[skill.name] ?? !this.disabledByDefault.has(skill.name);
      byName.set(skill.name, { ...skill, enabled });
    }
    const skills = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
    const view: SkillsView = {
      skills,
      enabled: skills.filter((s) => s.enabled),
      issues,
      get: (name) => byName.get(name),
      memo: new Map(),
    };
    this.views.delete(userId);
    if (this.views.size >= MAX_CACHED_USERS) this.views.delete(this.views.keys().next().value as string);
    this.views.set(userId, { stamp, view, generation: this.generation, checkedAt: now });
    return view;
  }

  /** The skill, or ANTLER_ERR_SKILL_NOT_FOUND (another user's custom skill is not found either). */
  require(userId: string, name: string): SkillRecord {
    const skill = this.view(userId).get(name);
    if (!skill) {
      throw skillError(SkillErrorCodes.NOT_FOUND, `no skill named ${JSON.stringify(name)}`, {
        where: `skills.${name}`,
        hint: "List the skills with `antler skills list` (or GET /api/skills).",
      });
    }
    return skill;
  }

  /** SKILL.md's body (after the frontmatter), read now: activation always sees the current text. */
  readBody(skill: SkillRecord): string {
    try {
      return parseSkillFile(readFileSync(join(skill.hostDir, "SKILL.md"), "utf8"), skill.location).body;
    } catch (err) {
      if (isAntlerError(err)) throw err;
      throw skillError(SkillErrorCodes.NOT_FOUND, `SKILL.md of "${skill.name}" can no longer be read: ${(err as Error).message}`, {
        where: skill.location,
        hint: "Reinstall the skill, or reload the skills list.",
      });
    }
  }

  /** Records a per-user override; `enabled` equal to the config default removes the override. */
  setEnabled(userId: string, name: string, enabled: boolean): SkillRecord {
    this.require(userId, name);
    const dirs = this.userDirs(userId);
    const state = this.readState(dirs.stateFile);
    if (enabled === !this.disabledByDefault.has(name)) delete state[name];
    else state[name] = enabled;
    mkdirSync(dirs.root, { recursive: true });
    const tmp = `${dirs.stateFile}.${process.pid}.${Date.now()}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ version: 1, enabled: state }, null, 2)}\n`);
    renameSync(tmp, dirs.stateFile);
    this.changed(userId);
    return this.require(userId, name);
  }

  /** Forgets every parsed folder, so edits inside skill folders are seen. */
  reload(): void {
    this.publicFolder = undefined;
    this.customFolders.clear();
    this.changed(undefined);
  }

  /** Drops the cached views (after an install or removal made by this process). */
  changed(userId: string | undefined): void {
    this.generation++;
    if (userId === undefined) this.views.clear();
    else {
      this.views.delete(userId);
      this.customFolders.delete(userId);
    }
    for (const listener of this.listeners) listener(userId);
  }

  private readState(file: string): Record<string, boolean> {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      return {};
    }
    try {
      const parsed = JSON.parse(text) as { enabled?: Record<string, unknown> };
      const out: Record<string, boolean> = {};
      for (const [name, value] of Object.entries(parsed.enabled ?? {})) if (typeof value === "boolean") out[name] = value;
      return out;
    } catch (err) {
      this.logger?.warn({ file, err: (err as Error).message }, "skills state file is not valid JSON; using the config defaults");
      return {};
    }
  }

  private parseFolder(dir: string, category: SkillCategory, stamp: number): ParsedFolder {
    const folder: ParsedFolder = { stamp, skills: [], issues: [] };
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return folder;
    }
    for (const name of entries.sort()) {
      if (name.startsWith(".")) continue;
      const hostDir = join(dir, name);
      const location = `${SKILLS_CONTAINER_PATH}/${category}/${name}/SKILL.md`;
      const issue = (message: string) => folder.issues.push({ category, folder: name, location, message });
      const info = lstatSync(hostDir, { throwIfNoEntry: false });
      if (!info?.isDirectory()) {
        if (info?.isSymbolicLink()) issue("the skill folder is a symbolic link; skills must be real folders");
        continue;
      }
      const file = join(hostDir, "SKILL.md");
      const fileInfo = lstatSync(file, { throwIfNoEntry: false });
      if (!fileInfo?.isFile()) {
        issue(fileInfo ? "SKILL.md is not a regular file" : "the folder has no SKILL.md");
        continue;
      }
      try {
        const { manifest } = parseSkillFile(readFileSync(file, "utf8"), location);
        if (manifest.name !== name) {
          issue(`the frontmatter names the skill "${manifest.name}" but its folder is "${name}"; rename one to match`);
          continue;
        }
        folder.skills.push({ ...manifest, category, location, hostDir });
      } catch (err) {
        issue(isAntlerError(err) ? (err.message.split("\n")[0] as string) : String(err));
      }
    }
    for (const i of folder.issues)
      this.logger?.warn({ skill: i.folder, category: i.category, location: i.location }, `skill skipped: ${i.message}`);
    return folder;
  }
}
