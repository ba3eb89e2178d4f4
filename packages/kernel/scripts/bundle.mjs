// Bundles the kernel's compiled entry points (dist/, from tsc) into dist/bundle/, which package.json's exports and
// bin/antler.js load. Every CLI start pays about half a millisecond per module file; the kernel's own ~40 files and
// its private dependencies (yaml, pino, semver, tapable: about 150 files) become a few chunks, which takes ~45 ms of
// CPU off `antler config check`. One build serves every entry point, so they share chunks: one copy of the kernel's
// state however a distribution imports it. Peer dependencies (zod, LangChain), kysely and tsyringe (loaded lazily) stay external.
import { readFileSync, rmSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
// tsyringe stays one module instance: the registry requires it lazily, `./di` imports it for authors' decorators.
const external = new Set([...Object.keys(manifest.peerDependencies ?? {}), "kysely", "tsyringe", "reflect-metadata", ...builtinModules]);
const packageOf = (id) => (id.startsWith("@") ? id.split("/").slice(0, 2).join("/") : id.split("/")[0]);

// Each export's compiled file (dist/x.js) becomes dist/bundle/<export name>.js.
const input = {};
for (const [subpath, target] of Object.entries(manifest.exports)) {
  if (typeof target === "string") continue; // ./package.json
  input[subpath === "." ? "index" : subpath.slice(2).replaceAll("/", "-")] = join(root, target.types.replace(/\.d\.ts$/, ".js"));
}

rmSync(join(root, "dist/bundle"), { recursive: true, force: true });
await build({
  input,
  platform: "node",
  external: (id) => id.startsWith("node:") || external.has(packageOf(id)),
  output: { dir: join(root, "dist/bundle"), format: "esm", entryFileNames: "[name].js", chunkFileNames: "chunks/[name]-[hash].js" },
  logLevel: "warn",
});
