import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export interface TarballSpecs {
  /** `file:` specs of the packages the project names itself, by package name. */
  direct: Record<string, string>;
  /** `file:` specs of every other `@antler/*` tarball in the folder (dependencies of the direct ones), for `overrides`. */
  overrides: Record<string, string>;
}

// `npm pack` and `pnpm pack` name a tarball <scope>-<name>-<version>.tgz: @antler/plugin-runtime@0.1.0 is
// antler-plugin-runtime-0.1.0.tgz.
const TARBALL = /^antler-(.+?)-(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?)\.tgz$/;

/**
 * The `file:` specs of the `@antler/*` tarballs in `dir`. Each package in `needed` must have one; when a folder holds
 * several versions of a package, the one at `versions[name]` is taken. Throws an Error whose message says what is
 * missing and how to make it.
 */
export function findTarballs(dir: string, needed: readonly string[], versions: Readonly<Record<string, string>>): TarballSpecs {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new Error(`--from-tarballs: ${dir} is not a folder. Pack the packages into one first, e.g. pnpm pack --pack-destination ${dir}`);
  }
  const byName = new Map<string, Array<{ file: string; version: string }>>();
  for (const file of readdirSync(dir).sort()) {
    const match = TARBALL.exec(file);
    if (!match) continue;
    const name = `@antler/${match[1]}`;
    byName.set(name, [...(byName.get(name) ?? []), { file, version: match[2] as string }]);
  }
  const pick = (name: string): string | undefined => {
    const found = byName.get(name) ?? [];
    const chosen = found.length === 1 ? found[0] : found.find((t) => t.version === versions[name]);
    return chosen && `file:${join(dir, chosen.file)}`;
  };
  const missing = needed.filter((name) => pick(name) === undefined);
  if (missing.length > 0) {
    const expected = missing.map((name) => `${name.slice(1).replace("/", "-")}-${versions[name] ?? "<version>"}.tgz`);
    throw new Error(
      `--from-tarballs: ${dir} has no single tarball for ${missing.join(", ")} (expected ${expected.join(", ")}). ` +
        "Pack each package with `pnpm pack --pack-destination <dir>` from its folder in an Antler clone.",
    );
  }
  const direct = Object.fromEntries(needed.map((name) => [name, pick(name) as string]));
  const overrides: Record<string, string> = {};
  for (const name of byName.keys()) {
    const spec = pick(name);
    if (!(name in direct) && spec) overrides[name] = spec;
  }
  return { direct, overrides };
}
