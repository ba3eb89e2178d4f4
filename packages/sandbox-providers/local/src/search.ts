import { lstat, readFile } from "node:fs/promises";
import { basename, isAbsolute, join, normalize } from "node:path";
import { AntlerError, ErrorCodes, type GrepMatch } from "@antler/kernel";

/** Files larger than this are not searched by grep. */
export const GREP_MAX_FILE_BYTES = 2 * 1024 * 1024;
/** A NUL in the first this-many bytes marks a file as binary; grep skips it. */
const BINARY_SNIFF_BYTES = 8000;
/** Longest line text returned per match; the rest is cut with an ellipsis. */
const GREP_MAX_LINE_CHARS = 1000;
const MAX_PATTERN_LENGTH = 4096;

/** `..` as a whole glob segment, including inside `{a,..}` or `@(..|x)` alternatives. */
const PARENT_SEGMENT = /(^|[/{,(|])\.\.($|[/},)|])/;

function invalid(message: string, where: string, hint: string): AntlerError {
  return new AntlerError(ErrorCodes.PATH_UNSAFE, message, { where, hint });
}

/** A glob pattern relative to the searched folder; absolute patterns are accepted only inside that folder. */
function relativePattern(pattern: string, virtualDir: string, where: string): string {
  if (typeof pattern !== "string" || pattern.length === 0 || pattern.length > MAX_PATTERN_LENGTH || pattern.includes("\0")) {
    throw invalid(
      `glob pattern ${JSON.stringify(String(pattern).slice(0, 80))} is empty, too long or contains NUL`,
      where,
      "Pass a pattern like **/*.ts.",
    );
  }
  let relative = pattern;
  if (relative.startsWith("/")) {
    if (!relative.startsWith(`${virtualDir}/`)) {
      throw invalid(
        `glob pattern ${JSON.stringify(pattern)} is absolute and outside ${virtualDir}`,
        where,
        `Make the pattern relative to the search folder (${virtualDir}) or pass that folder as path.`,
      );
    }
    relative = relative.slice(virtualDir.length + 1);
  }
  if (PARENT_SEGMENT.test(relative)) {
    throw invalid(
      `glob pattern ${JSON.stringify(pattern)} climbs out with ".."`,
      where,
      `Keep the pattern inside the search folder (${virtualDir}); to search elsewhere, pass that folder as path.`,
    );
  }
  return relative;
}

/** tinyglobby may still hand back a path outside cwd for exotic patterns; those are dropped. */
function staysInside(relative: string): boolean {
  const n = normalize(relative);
  return !isAbsolute(n) && n !== ".." && !n.startsWith("../");
}

function toVirtual(virtualDir: string, relative: string): string {
  return virtualDir === "/" ? `/${relative}` : `${virtualDir}/${relative}`;
}

export interface GlobFilesOptions {
  pattern: string;
  hostDir: string;
  virtualDir: string;
  maxResults: number;
  where: string;
}

/** Files under `hostDir` matching `pattern`, as sorted virtual paths. Symlinked folders are not entered. */
export async function globFiles(options: GlobFilesOptions): Promise<string[]> {
  const pattern = relativePattern(options.pattern, options.virtualDir, options.where);
  const { glob: tinyglob } = await import("tinyglobby");
  const found = await tinyglob(pattern, {
    cwd: options.hostDir,
    onlyFiles: true,
    dot: false,
    followSymbolicLinks: false,
    expandDirectories: false,
    absolute: false,
  });
  return found
    .filter(staysInside)
    .sort()
    .slice(0, Math.max(0, options.maxResults))
    .map((rel) => toVirtual(options.virtualDir, rel));
}

export interface GrepFilesOptions {
  pattern: string;
  hostPath: string;
  virtualPath: string;
  isDirectory: boolean;
  glob: string | undefined;
  ignoreCase: boolean;
  maxMatches: number;
  where: string;
}

/**
 * Lines matching a regular expression, searched in-process: regular files only (symlinks are skipped so a
 * link cannot read outside the root), at most GREP_MAX_FILE_BYTES each, binaries skipped. A `glob` without
 * a slash matches file names at any depth (`*.ts`); with a slash it matches the path relative to the folder.
 */
export async function grepFiles(options: GrepFilesOptions): Promise<GrepMatch[]> {
  if (typeof options.pattern !== "string" || options.pattern.length > MAX_PATTERN_LENGTH) {
    throw new AntlerError(ErrorCodes.SANDBOX_EXEC_FAILED, "grep pattern is missing or longer than 4096 characters", {
      where: options.where,
      hint: "Pass a shorter regular expression.",
    });
  }
  let regex: RegExp;
  try {
    regex = new RegExp(options.pattern, options.ignoreCase ? "iu" : "u");
  } catch {
    try {
      regex = new RegExp(options.pattern, options.ignoreCase ? "i" : "");
    } catch (err) {
      throw new AntlerError(
        ErrorCodes.SANDBOX_EXEC_FAILED,
        `grep pattern ${JSON.stringify(options.pattern)} is not a valid regular expression`,
        {
          where: options.where,
          hint: "Use JavaScript regular expression syntax; escape special characters such as ( [ { . * + ?",
          cause: err,
        },
      );
    }
  }

  let files: Array<{ host: string; virtual: string }>;
  if (options.isDirectory) {
    const filter = options.glob === undefined ? "**/*" : options.glob.includes("/") ? options.glob : `**/${options.glob}`;
    const pattern = relativePattern(filter, options.virtualPath, options.where);
    const { glob: tinyglob } = await import("tinyglobby");
    const found = await tinyglob(pattern, {
      cwd: options.hostPath,
      onlyFiles: true,
      dot: false,
      followSymbolicLinks: false,
      expandDirectories: false,
      ignore: ["**/node_modules/**", "**/.git/**"],
    });
    files = found
      .filter(staysInside)
      .sort()
      .map((rel) => ({ host: join(options.hostPath, rel), virtual: toVirtual(options.virtualPath, rel) }));
  } else {
    files = [{ host: options.hostPath, virtual: options.virtualPath }];
    // A single file: the glob's last segment is tested against its name.
    const nameGlob = options.glob?.split("/").at(-1);
    if (nameGlob !== undefined && !new RegExp(globToRegExpSource(nameGlob)).test(basename(options.hostPath))) files = [];
  }

  const matches: GrepMatch[] = [];
  for (const file of files) {
    if (matches.length >= options.maxMatches) break;
    let info: Awaited<ReturnType<typeof lstat>>;
    try {
      info = await lstat(file.host);
    } catch {
      continue;
    }
    if (!info.isFile() || info.size > GREP_MAX_FILE_BYTES) continue;
    let bytes: Buffer;
    try {
      bytes = await readFile(file.host);
    } catch {
      continue;
    }
    if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) continue;
    const lines = bytes.toString("utf8").split(/\r?\n/);
    for (const [i, line] of lines.entries()) {
      if (!regex.test(line)) continue;
      const text = line.length > GREP_MAX_LINE_CHARS ? `${line.slice(0, GREP_MAX_LINE_CHARS)}…` : line;
      matches.push({ path: file.virtual, line: i + 1, text });
      if (matches.length >= options.maxMatches) break;
    }
  }
  return matches;
}

/** Enough of glob syntax (`*`, `?`, `{a,b}`) to test one file name when grep's path is a single file. */
function globToRegExpSource(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "{") out += "(?:";
    else if (c === "}") out += ")";
    else if (c === ",") out += "|";
    else out += c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return `^${out}$`;
}
