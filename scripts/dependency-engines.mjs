// Which installed production dependencies of the published packages declare a Node range (`engines.node`) that
// leaves out a Node version our own `engines` allow: installing there warns (npm's EBADENGINE), and the dependency
// may not work. Walked from each package's folder the way Node resolves, so it holds for any node_modules layout.
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import semver from "semver";

/**
 * The newest Node major Antler is run on (the README names 20, 22 and 24). Versions above it are not held against a
 * dependency: a native addon (better-sqlite3) lists the majors it has been built for, and no one has run a Node
 * that is not out yet.
 */
export const NEWEST_TESTED_NODE_MAJOR = 24;

/** The folder `name` resolves to from `fromDir` (Node's walk up the node_modules folders), or undefined. */
function resolvePackageDir(name, fromDir) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return realpathSync(candidate);
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Whether every Node our range allows, up to NEWEST_TESTED_NODE_MAJOR, is one the dependency's range allows too.
 * Checked one major at a time: semver's subset() wants one alternative of theirs to hold a whole one of ours, and
 * `>=22` is not inside any one of `22.x || 23.x || 24.x`.
 */
export function allowsAllOf(theirs, ours) {
  for (let major = semver.minVersion(ours).major; major <= NEWEST_TESTED_NODE_MAJOR; major++) {
    const slice = new semver.Range(ours).set
      .map((comparators) => `${comparators.map((c) => c.value).join(" ")} >=${major}.0.0 <${major + 1}.0.0-0`)
      .filter((set) => semver.intersects(set, `${major}.x`));
    if (slice.length > 0 && !semver.subset(slice.join(" || "), theirs)) return false;
  }
  return true;
}

/**
 * @param {{ name: string, dir: string, manifest: Record<string, any> }[]} packages the published workspace packages
 * @returns {{ dependency: string, engines: string, via: string }[]} one row per offending dependency and package
 */
export function engineConflicts(packages) {
  const conflicts = [];
  for (const pkg of packages) {
    const ours = pkg.manifest.engines?.node;
    if (typeof ours !== "string") continue;
    const seen = new Set();
    const visit = (dir) => {
      if (seen.has(dir)) return;
      seen.add(dir);
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      const engines = manifest.engines?.node;
      if (typeof engines === "string" && !allowsAllOf(engines, ours)) {
        conflicts.push({ dependency: `${manifest.name}@${manifest.version}`, engines, via: pkg.name });
      }
      // Optional peers are the installer's choice: only required ones are walked, where installed.
      const optional = (p) => manifest.peerDependenciesMeta?.[p]?.optional === true;
      const peers = Object.keys(manifest.peerDependencies ?? {}).filter((p) => !optional(p));
      for (const name of new Set([
        ...Object.keys(manifest.dependencies ?? {}),
        ...Object.keys(manifest.optionalDependencies ?? {}),
        ...peers,
      ])) {
        const found = resolvePackageDir(name, dir);
        if (found) visit(found);
      }
    };
    for (const [name, spec] of Object.entries({ ...pkg.manifest.dependencies, ...pkg.manifest.optionalDependencies })) {
      // A workspace package is checked as a published package of its own.
      if (String(spec).startsWith("workspace:")) continue;
      const found = resolvePackageDir(name, pkg.dir);
      if (found) visit(found);
    }
  }
  return conflicts;
}
