import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { CreateOptions, PackageManager } from "./args.js";
import { findTarballs } from "./tarballs.js";
import { projectFiles } from "./template.js";
import { ANTLER_PACKAGES, type TemplateVersions, templateVersions } from "./versions.js";

/** Why a project cannot be written into `dir`, or null when it can (it is missing, or an empty folder). */
export function targetProblem(dir: string): string | null {
  if (!existsSync(dir)) return null;
  if (!statSync(dir).isDirectory()) return `${dir} exists and is a file; pick a new folder name.`;
  const entries = readdirSync(dir);
  if (entries.length === 0) return null;
  const shown = entries.slice(0, 3).join(", ") + (entries.length > 3 ? ", ..." : "");
  return `${dir} is not empty (${shown}); nothing was written. Pick a new folder, or empty this one first.`;
}

/**
 * The files of the project `options` describes, by path. Throws (with an actionable message) when a folder of
 * tarballs is given and lacks one the project needs.
 */
export function renderProject(
  options: Pick<CreateOptions, "name" | "packageManager" | "fromTarballs">,
  versions: TemplateVersions = templateVersions(),
) {
  const tarballs = options.fromTarballs === undefined ? undefined : findTarballs(options.fromTarballs, ANTLER_PACKAGES, versions);
  return projectFiles({
    name: options.name,
    packageManager: options.packageManager,
    versions,
    ...(tarballs ? { tarballs } : {}),
  });
}

/** Writes `files` under `dir` (creating it), never over an existing file. */
export function writeProject(dir: string, files: Readonly<Record<string, string>>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text, { flag: "wx" });
  }
}

/** Runs `<packageManager> install` in `dir` with the terminal attached; resolves with its exit code. */
export function runInstall(packageManager: PackageManager, dir: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(packageManager, ["install"], { cwd: dir, stdio: "inherit", shell: process.platform === "win32" });
    child.on("error", () => resolve(127));
    child.on("close", (code) => resolve(code ?? 1));
  });
}
