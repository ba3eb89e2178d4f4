import { lstat, realpath } from "node:fs/promises";
import { join } from "node:path";
import { AntlerError, ErrorCodes, isWithin, SANDBOX_VIRTUAL_ROOTS, VIRTUAL_ROOT } from "@antler/kernel";

const SKILLS_PUBLIC = `${SANDBOX_VIRTUAL_ROOTS.skills}/public`;
const SKILLS_CUSTOM = `${SANDBOX_VIRTUAL_ROOTS.skills}/custom`;

/** Longest virtual path accepted, in characters (PATH_MAX on Linux). */
export const MAX_PATH_LENGTH = 4096;

/** Host folders behind one local sandbox's virtual roots. */
export interface LocalSandboxHostDirs {
  /** `…/user-data`, the parent of workspace, uploads and outputs; `/mnt/user-data` in commands. */
  readonly userData: string;
  readonly workspace: string;
  readonly uploads: string;
  readonly outputs: string;
  /** Behind read-only `/mnt/skills`. */
  readonly skills: string;
  /** Behind read-only `/mnt/skills/public` when skills are mounted (the distribution's public skills). */
  readonly skillsPublic?: string | undefined;
  /** Behind read-only `/mnt/skills/custom` when skills are mounted (the user's own skills). */
  readonly skillsCustom?: string | undefined;
  /** Behind read-only `/mnt/acp-workspace`. */
  readonly acpWorkspace: string;
}

export type PathAccess = "read" | "write";

export interface ResolvedPath {
  /** The normalized virtual path (no `.` segments, no doubled or trailing slashes). */
  readonly virtual: string;
  /** The host path to operate on, symlinks already resolved and confined to the root. */
  readonly host: string;
}

interface RootMapping {
  readonly virtual: string;
  readonly host: string;
  readonly readOnly: boolean;
  /** Only the root itself, for listing (`/mnt/user-data`); nothing below it except through the other roots. */
  readonly exactOnly: boolean;
}

/**
 * Percent-escapes of characters that change a path's meaning once something decodes them: `.` `/` `\` NUL `%`
 * (double encoding) and the overlong UTF-8 lead bytes used to smuggle `.` and `/`. Plain `%` in a name is fine.
 */
const ENCODED_PATH_SYNTAX = /%(2e|2f|5c|00|25|c0|c1|e0%80)/i;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what this refuses
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function describePath(path: string): string {
  return path.length > 120 ? `${JSON.stringify(path.slice(0, 80))}… (${path.length} characters)` : JSON.stringify(path);
}

function errnoOf(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : undefined;
}

/**
 * Translates between the agent's virtual paths and one thread's host folders, and is the only gate file
 * operations pass through: a path is accepted only if it is a clean virtual path under a known root and its
 * real location (every existing component's symlinks resolved) stays inside that root's real folder.
 */
export class SandboxPathMap {
  private readonly roots: readonly RootMapping[];
  private readonly commandPattern: RegExp;
  private readonly commandReplacements: ReadonlyMap<string, string>;
  private outputPattern: RegExp;
  private outputReplacements: Map<string, string>;

  constructor(
    private readonly sandboxId: string,
    readonly dirs: LocalSandboxHostDirs,
  ) {
    // The skill mounts come before /mnt/skills itself: the first root a path falls under wins.
    const skillMounts: RootMapping[] = [];
    if (dirs.skillsPublic) skillMounts.push({ virtual: SKILLS_PUBLIC, host: dirs.skillsPublic, readOnly: true, exactOnly: false });
    if (dirs.skillsCustom) skillMounts.push({ virtual: SKILLS_CUSTOM, host: dirs.skillsCustom, readOnly: true, exactOnly: false });
    this.roots = [
      { virtual: SANDBOX_VIRTUAL_ROOTS.workspace, host: dirs.workspace, readOnly: false, exactOnly: false },
      { virtual: SANDBOX_VIRTUAL_ROOTS.uploads, host: dirs.uploads, readOnly: false, exactOnly: false },
      { virtual: SANDBOX_VIRTUAL_ROOTS.outputs, host: dirs.outputs, readOnly: false, exactOnly: false },
      ...skillMounts,
      { virtual: SANDBOX_VIRTUAL_ROOTS.skills, host: dirs.skills, readOnly: true, exactOnly: false },
      { virtual: SANDBOX_VIRTUAL_ROOTS.acpWorkspace, host: dirs.acpWorkspace, readOnly: true, exactOnly: false },
      { virtual: VIRTUAL_ROOT, host: dirs.userData, readOnly: true, exactOnly: true },
    ];
    this.commandReplacements = new Map([
      [VIRTUAL_ROOT, dirs.userData],
      [SANDBOX_VIRTUAL_ROOTS.skills, dirs.skills],
      ...skillMounts.map((r): [string, string] => [r.virtual, r.host]),
      [SANDBOX_VIRTUAL_ROOTS.acpWorkspace, dirs.acpWorkspace],
    ]);
    this.commandPattern = SandboxPathMap.boundedPattern([...this.commandReplacements.keys()]);
    this.outputReplacements = new Map();
    for (const [virtual, host] of this.commandReplacements) this.outputReplacements.set(host, virtual);
    this.outputPattern = SandboxPathMap.boundedPattern([...this.outputReplacements.keys()]);
  }

  /**
   * Matches any of `paths` as a whole path prefix: not glued to a preceding path character, and followed by
   * `/`, the end, or something that cannot continue a file name (so `/mnt/skills2` is left alone).
   */
  private static boundedPattern(paths: string[]): RegExp {
    const alternatives = [...paths].sort((a, b) => b.length - a.length).map(escapeRegExp);
    return new RegExp(`(?<![\\w.~/-])(${alternatives.join("|")})(?![\\w-]|\\.\\w)`, "g");
  }

  /**
   * Also translates the real paths of the host folders back (a folder under a symlinked temp dir prints as its
   * real path from `pwd -P` or `realpath`). Call once the folders exist.
   */
  async learnRealPaths(): Promise<void> {
    for (const [virtual, host] of this.commandReplacements) {
      try {
        const real = await realpath(host);
        if (real !== host) this.outputReplacements.set(real, virtual);
      } catch {
        // not there (skills or acp-workspace may never exist); the lexical path is all there is
      }
    }
    this.outputPattern = SandboxPathMap.boundedPattern([...this.outputReplacements.keys()]);
  }

  /** Virtual paths in a command's text → host paths. */
  commandToHost(command: string): string {
    return command.replace(this.commandPattern, (match) => this.commandReplacements.get(match) ?? match);
  }

  /** Host paths of this sandbox's folders in command output → virtual paths. */
  outputToVirtual(text: string): string {
    if (text.length === 0) return text;
    return text.replace(this.outputPattern, (match) => this.outputReplacements.get(match) ?? match);
  }

  /** The virtual roots, with the read-only ones marked, for error hints. */
  describeRoots(): string {
    return this.roots
      .filter((r) => !r.exactOnly)
      .map((r) => (r.readOnly ? `${r.virtual} (read-only)` : r.virtual))
      .join(", ");
  }

  private unsafe(path: string, why: string, cause?: unknown): AntlerError {
    return new AntlerError(ErrorCodes.PATH_UNSAFE, `path ${describePath(path)} is refused: ${why}`, {
      where: `sandbox ${this.sandboxId}`,
      hint: `Use an absolute virtual path under ${this.describeRoots()}, without "..", "\\" or percent-escapes.`,
      details: { path: path.slice(0, 200), allowedRoots: this.roots.filter((r) => !r.exactOnly).map((r) => r.virtual) },
      cause,
    });
  }

  /** Syntax checks that need no file system: the result is a normalized absolute virtual path. */
  normalize(path: string): string {
    if (typeof path !== "string" || path.length === 0) throw this.unsafe(String(path), "it is empty");
    if (path.length > MAX_PATH_LENGTH) throw this.unsafe(path, `it is longer than ${MAX_PATH_LENGTH} characters`);
    if (path.includes("\0")) throw this.unsafe(path, "it contains a NUL byte");
    if (CONTROL_CHARACTER.test(path)) throw this.unsafe(path, "it contains a control character");
    if (path.includes("\\")) throw this.unsafe(path, "it contains a backslash");
    if (ENCODED_PATH_SYNTAX.test(path)) throw this.unsafe(path, "it contains a percent-encoded path character");
    if (!path.startsWith("/")) throw this.unsafe(path, "it is not an absolute virtual path");
    const segments = path.split("/");
    if (segments.includes("..")) throw this.unsafe(path, 'it contains a ".." segment');
    return `/${segments.filter((s) => s !== "" && s !== ".").join("/")}`;
  }

  /**
   * The host path behind a virtual path, for `access`. Refuses (PATH_UNSAFE) anything outside the roots or
   * whose real path leaves its root through a symlink, and (SANDBOX_PATH_READ_ONLY) writes to read-only roots.
   */
  async resolve(path: string, access: PathAccess): Promise<ResolvedPath> {
    const virtual = this.normalize(path);
    const root = this.roots.find((r) => virtual === r.virtual || (!r.exactOnly && virtual.startsWith(`${r.virtual}/`)));
    if (!root) throw this.unsafe(path, "it is outside the sandbox's folders");
    if (access === "write" && root.readOnly) {
      if (root.exactOnly) throw this.unsafe(path, "it is outside the sandbox's writable folders");
      throw new AntlerError(ErrorCodes.SANDBOX_PATH_READ_ONLY, `path ${describePath(path)} is under read-only ${root.virtual}`, {
        where: `sandbox ${this.sandboxId}`,
        hint: `Write under ${SANDBOX_VIRTUAL_ROOTS.workspace} or ${SANDBOX_VIRTUAL_ROOTS.outputs} instead.`,
        details: { path, root: root.virtual },
      });
    }
    const rest = virtual.slice(root.virtual.length).split("/").filter(Boolean);
    const host = join(root.host, ...rest);
    if (!isWithin(root.host, host)) throw this.unsafe(path, "it leaves its root");
    return { virtual, host: await this.confine(path, root, rest) };
  }

  /** Walks the existing components below the root, resolving symlinks, and refuses any that lead outside. */
  private async confine(path: string, root: RootMapping, rest: string[]): Promise<string> {
    let realRoot: string;
    try {
      realRoot = await realpath(root.host);
    } catch {
      return join(root.host, ...rest); // the root does not exist yet, so nothing below it can be a symlink
    }
    let current = realRoot;
    for (const [i, segment] of rest.entries()) {
      const next = join(current, segment);
      let isLink: boolean;
      try {
        isLink = (await lstat(next)).isSymbolicLink();
      } catch (err) {
        const code = errnoOf(err);
        if (code === "ENOENT" || code === "ENOTDIR") return join(next, ...rest.slice(i + 1));
        throw this.unsafe(path, `it cannot be inspected (${code ?? "error"})`, err);
      }
      if (!isLink) {
        current = next;
        continue;
      }
      let target: string;
      try {
        target = await realpath(next);
      } catch (err) {
        throw this.unsafe(path, "it goes through a symlink whose target does not exist", err);
      }
      if (!isWithin(realRoot, target)) throw this.unsafe(path, `it goes through a symlink that leads outside ${root.virtual}`);
      current = target;
    }
    return current;
  }
}
