import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** The `@antler/*` packages a generated project depends on (the runtime, and the default preset's plugins by name). */
export const ANTLER_PACKAGES = [
  "@antler/kernel",
  "@antler/plugin-runtime",
  "@antler/plugin-cassette",
  "@antler/plugin-storage-sqlite",
] as const;

/** The other packages whose versions a generated project pins. */
const OTHER_PACKAGES = ["zod", "vitest"] as const;

export type TemplateVersions = Readonly<Record<(typeof ANTLER_PACKAGES)[number] | (typeof OTHER_PACKAGES)[number], string>>;

interface Manifest {
  version: string;
  devDependencies?: Record<string, string>;
}

/**
 * The versions a generated project pins, read from this package's own manifest: its devDependencies name each
 * `@antler/*` package as `workspace:*`, which `pnpm pack` (and so the published package) turns into the
 * workspace's version. Run from the workspace itself, the linked package's manifest gives it.
 */
export function templateVersions(manifestUrl: URL = new URL("../package.json", import.meta.url)): TemplateVersions {
  const manifest = JSON.parse(readFileSync(manifestUrl, "utf8")) as Manifest;
  const require = createRequire(manifestUrl);
  const versionOf = (name: string): string => {
    const spec = manifest.devDependencies?.[name];
    if (spec === undefined) throw new Error(`create-antler's package.json names no version of ${name} (devDependencies)`);
    if (!spec.startsWith("workspace:")) return spec.replace(/^[\^~]/, "");
    return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), "utf8")) as Manifest).version;
  };
  return Object.fromEntries([...ANTLER_PACKAGES, ...OTHER_PACKAGES].map((name) => [name, versionOf(name)])) as TemplateVersions;
}
