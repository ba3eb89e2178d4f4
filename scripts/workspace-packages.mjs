// The workspace's published packages (packages/*, packages/<kind>/*, not private), found by walking the folders
// pnpm-workspace.yaml names, in a stable order. Shared by the API report and the packaging lint.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * @param {string} root the workspace root
 * @returns {{ name: string, dir: string, manifest: Record<string, any> }[]}
 */
export function publishedPackages(root) {
  const found = [];
  const visit = (dir, depth) => {
    const manifestPath = join(dir, "package.json");
    if (existsSync(manifestPath)) {
      const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
      if (!manifest.private) found.push({ name: manifest.name, dir, manifest });
      return;
    }
    if (depth === 0) return;
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory() && entry.name !== "node_modules" && !entry.name.startsWith(".")) visit(join(dir, entry.name), depth - 1);
    }
  };
  if (existsSync(join(root, "packages"))) visit(join(root, "packages"), 2);
  return found.sort((a, b) => a.name.localeCompare(b.name));
}
