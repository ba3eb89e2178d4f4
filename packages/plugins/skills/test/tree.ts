import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";

/** Every path under `root` with its type and size: equal before and after means nothing was written. */
export function snapshotTree(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      const info = lstatSync(path);
      const r = rel ? `${rel}/${name}` : name;
      if (info.isSymbolicLink()) out.push(`${r} -> ${readlinkSync(path)}`);
      else if (info.isDirectory()) {
        out.push(`${r}/`);
        walk(path, r);
      } else out.push(`${r} (${info.size})`);
    }
  };
  walk(root, "");
  return out;
}
