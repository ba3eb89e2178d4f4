import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import type { CliIO } from "@antler/kernel";
import { pluginFiles, TEMPLATE_VERSIONS } from "./plugin-template.js";

export const PLUGIN_NEW_USAGE = "antler plugin new <name> [--dir <path>]";

// npm's rules for a package name: lowercase, URL-safe, at most 214 characters, an optional @scope/.
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

/** Why `name` cannot be a package name, or null when it can. */
export function invalidPluginName(name: string): string | null {
  if (name.length > 214) return "it is longer than 214 characters";
  if (!NPM_NAME.test(name)) {
    return "a package name is lowercase letters, digits, '-', '.', '_' and '~', optionally under an @scope/, with no spaces or other path characters";
  }
  if (["node_modules", "favicon.ico"].includes(name)) return "npm reserves that name";
  return null;
}

/**
 * `workspace:*` when `dir` falls under one of the `packages:` globs of an Antler checkout's pnpm-workspace.yaml
 * (so `pnpm install` links the local kernel), otherwise a version range for an installed Antler.
 */
export function antlerRangeFor(dir: string): string {
  for (let root = dirname(dir); ; root = dirname(root)) {
    const file = join(root, "pnpm-workspace.yaml");
    if (existsSync(file) && existsSync(join(root, "packages", "kernel", "package.json"))) {
      const globs = [...readFileSync(file, "utf8").matchAll(/^\s*-\s*["']?([^"'\s#]+)["']?\s*$/gm)].map((m) => m[1] as string);
      const parts = relative(root, dir).split(sep);
      const matches = (glob: string) => {
        const segments = glob.split("/");
        return segments.length === parts.length && segments.every((s, i) => s === "*" || s === parts[i]);
      };
      if (globs.some(matches)) return "workspace:*";
    }
    if (dirname(root) === root) return `^${TEMPLATE_VERSIONS.kernel}`;
  }
}

const write = (stream: NodeJS.WritableStream, text: string) => stream.write(text.endsWith("\n") ? text : `${text}\n`);

/** `antler plugin new <name>`: writes a plugin package (a tool, a middleware, a test that passes) into a new folder. */
export async function pluginNewCommand(args: string[], io: Pick<CliIO, "stdout" | "stderr" | "cwd">): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    // --config and -v are the CLI's own; accepted so that they are not unknown options here.
    options: { dir: { type: "string", short: "d" }, config: { type: "string", short: "c" }, verbose: { type: "boolean", short: "v" } },
    allowPositionals: true,
    strict: true,
  });
  const [name, ...extra] = positionals;
  if (name === undefined || extra.length > 0) {
    write(io.stderr, `antler plugin new: give exactly one package name, e.g. antler plugin new acme-notes\nUsage: ${PLUGIN_NEW_USAGE}`);
    return 2;
  }
  const invalid = invalidPluginName(name);
  if (invalid) {
    write(
      io.stderr,
      `antler plugin new: ${JSON.stringify(name)} is not a valid package name: ${invalid} (e.g. acme-notes, @acme/antler-notes).`,
    );
    return 2;
  }
  const dir = resolve(io.cwd, values.dir ?? (name.split("/").pop() as string));
  if (existsSync(dir) && (!statSync(dir).isDirectory() || readdirSync(dir).length > 0)) {
    write(io.stderr, `antler plugin new: ${dir} already exists and is not an empty folder; nothing was written. Pick another --dir.`);
    return 1;
  }
  const range = antlerRangeFor(dir);
  const files = pluginFiles({ name, antlerRange: range });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text, { flag: "wx" });
  }
  write(io.stdout, `Created plugin ${name} in ${dir}:`);
  for (const path of Object.keys(files)) write(io.stdout, `  ${path}`);
  for (const line of nextSteps({ dir, cwd: io.cwd, inWorkspace: range === "workspace:*", clone: antlerClone() })) write(io.stdout, line);
  return 0;
}

/** The folders under `packages/` of the packages a new plugin installs: its devDependencies and what they depend on. */
export const PLUGIN_TARBALL_PACKAGES = [
  "kernel",
  "plugins/runtime",
  "plugins/cassette",
  "plugins/storage-sqlite",
  "model-kit",
  "storage-kit",
];

/** The Antler clone whose kernel this CLI runs, or undefined when the kernel is an installed package. */
export function antlerClone(): string | undefined {
  try {
    const kernel = dirname(realpathSync(createRequire(import.meta.url).resolve("@antler/kernel/package.json")));
    const root = dirname(dirname(kernel));
    return existsSync(join(root, "pnpm-workspace.yaml")) && kernel === join(root, "packages", "kernel") ? root : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What to run next, as lines to print. Inside the workspace, pnpm links the local packages. Elsewhere npm installs,
 * and since @antler/* are not on the npm registry yet, from tarballs packed in a clone (this CLI's own, if it runs from one).
 */
export function nextSteps(options: { dir: string; cwd: string; inWorkspace: boolean; clone: string | undefined }): string[] {
  const cd = `cd ${relative(options.cwd, options.dir) || "."}`;
  if (options.inWorkspace) return ["", `Next (inside the Antler workspace, pnpm links its packages): ${cd} && pnpm install && pnpm test`];
  const packs = join(tmpdir(), "antler-packs");
  const tarballs = PLUGIN_TARBALL_PACKAGES.map((p) =>
    join(packs, `antler-${p.replace(/^plugins\//, "plugin-")}-${TEMPLATE_VERSIONS.kernel}.tgz`),
  );
  return [
    "",
    "Next: the @antler packages are not on the npm registry yet, so pack them in an Antler clone (after `pnpm run build`)",
    "and install the tarballs:",
    `  cd ${options.clone ?? "<your Antler clone>"} && for p in ${PLUGIN_TARBALL_PACKAGES.join(" ")}; do (cd packages/$p && npx -y pnpm@${TEMPLATE_VERSIONS.pnpm} pack --pack-destination ${packs}); done`,
    `  ${cd} && npm install --save-dev ${tarballs.join(" ")} && npm test`,
  ];
}
