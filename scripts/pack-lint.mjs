// `pnpm pack:lint`: every published package checked as users will get it. Each is packed with `pnpm pack` (so
// `workspace:` ranges become real ones, as on publish) into a temp dir, then, two packages at a time:
//   - publint on the tarball (exports targets exist in it, conditions in a working order, ...);
//   - Are the Types Wrong on the tarball, with the CLI's `esm-only` profile: the packages are ESM-only by design,
//     so only the resolutions that can load ESM (node16 from ESM, bundler) must find types;
//   - `npm publish --dry-run` of the tarball (npm's own manifest checks);
//   - the metadata every published package.json must carry (repository with its directory, license, homepage,
//     keywords, engines, sideEffects, public access).
// publint and Are the Types Wrong run in-process through their libraries (one load of TypeScript for all packages
// instead of one per package); `pnpm exec attw --pack <dir> --profile esm-only` and `pnpm exec publint <dir>` give
// the same answers for one package by hand.
//
// A clean result is kept per tarball hash (node_modules/.cache/antler-pack-lint), so a rerun checks only what
// changed; --no-cache checks everything.
//
// Usage: node scripts/pack-lint.mjs [--filter NAME]... [--no-cache]. Run after a build (the tarballs hold dist/).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { checkPackage, createPackageFromTarballData } from "@arethetypeswrong/core";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { metadataProblems } from "./package-metadata.mjs";
import { publishedPackages } from "./workspace-packages.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const CONCURRENCY = 2;
const useCache = !process.argv.includes("--no-cache");
// The `esm-only` profile of the attw CLI: CommonJS resolutions are not expected to work.
const IGNORED_RESOLUTIONS = new Set(["node10", "node16-cjs"]);

/**
 * The pnpm that runs this script (`npm test` fetches pinned pnpm through npx, so none may be on PATH); plain `pnpm`
 * when the script is run directly. Returns [command, leading args].
 */
function pnpmCommand() {
  // biome-ignore lint/suspicious/noUndeclaredEnvVars: set by the package manager running this script; no turbo task reads it
  const execPath = process.env.npm_execpath;
  if (execPath && /pnpm\.c?js$/.test(execPath)) return [process.execPath, [execPath]];
  return ["pnpm", []];
}

function run(cmd, args, cwd) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, npm_config_update_notifier: "false" },
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    child.on("close", (code) => resolve({ code, out }));
    child.on("error", (error) => resolve({ code: -1, out: String(error) }));
  });
}

async function attwProblems(tarball) {
  const pkg = createPackageFromTarballData(new Uint8Array(readFileSync(tarball)));
  const analysis = await checkPackage(pkg);
  if (!analysis.types) return ["no types found in the package"];
  return analysis.problems
    .filter((p) => !("resolutionKind" in p) || !IGNORED_RESOLUTIONS.has(p.resolutionKind))
    .map((p) => {
      const where = [p.entrypoint, p.resolutionKind].filter(Boolean).join(" ");
      const detail = p.fileName ?? p.typesFileName ?? p.moduleSpecifier ?? "";
      return `${p.kind}${where ? ` (${where})` : ""}${detail ? `: ${detail}` : ""}`;
    });
}

async function publintProblems(tarball) {
  const data = readFileSync(tarball);
  // No pkgDir: publint lints the package root inside the tarball, as its CLI does when given a tarball.
  const { messages, pkg } = await publint({
    level: "suggestion",
    pack: { tarball: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) },
  });
  return messages.map((m) => `${m.type}: ${formatMessage(m, pkg, { color: false }) ?? m.code}`);
}

// A tarball that passed once passes again: the same files make the same result, so a clean result
// is kept under a hash of its files (with the tools' versions) and a rerun checks only the packages that changed. CI starts
// from a fresh clone and checks them all.
const cacheDir = join(root, "node_modules", ".cache", "antler-pack-lint");
const toolVersions = ["publint", "@arethetypeswrong/core"]
  .map((name) => `${name}@${JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")).version}`)
  .join(" ");

function cacheKey(tarball) {
  const hash = createHash("sha256").update(toolVersions).update(process.version);
  // The files, not the bytes: `pnpm pack -r` writes entries in whatever order its reads finish.
  // pnpm's rewritten package.json lists workspace dependencies in no fixed order either: compare it by content.
  for (const [name, body] of tarEntries(gunzipSync(readFileSync(tarball)))) {
    const content = name === "package/package.json" ? JSON.stringify(sortedKeys(JSON.parse(body.toString("utf8")))) : body;
    hash.update(`${name}\0${content.length}\0`).update(content);
  }
  return hash.digest("hex");
}

function sortedKeys(value) {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sortedKeys(value[k])]),
  );
}

/** The regular files of a tar archive as [path, contents], sorted by path (ustar headers; pnpm writes no others). */
function tarEntries(tar) {
  const entries = [];
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start, length) =>
      header
        .subarray(start, start + length)
        .toString("latin1")
        .replace(/\0.*$/s, "");
    const name = `${field(345, 155) ? `${field(345, 155)}/` : ""}${field(0, 100)}`;
    const size = Number.parseInt(field(124, 12).trim() || "0", 8);
    const type = field(156, 1) || "0";
    if (type === "0") entries.push([name, tar.subarray(offset + 512, offset + 512 + size)]);
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

async function lintOne(pkg, tarball, rootManifest, stats) {
  const rel = relative(root, pkg.dir);
  const found = metadataProblems(pkg.manifest, rel, rootManifest).map((p) => `metadata: ${p}`);
  const key = cacheKey(tarball);
  if (useCache && existsSync(join(cacheDir, key))) {
    stats.cached++;
    return found;
  }
  const checked = [];
  for (const p of await publintProblems(tarball)) checked.push(`publint ${p}`);
  for (const p of await attwProblems(tarball)) checked.push(`attw: ${p}`);
  // --offline: the dry run needs nothing from the registry, and CI's result must not depend on it.
  const dry = await run("npm", ["publish", "--dry-run", "--offline", "--ignore-scripts", "--access", "public", tarball], dirname(tarball));
  if (dry.code !== 0) checked.push(`npm publish --dry-run failed:\n${indent(dry.out.trim())}`);
  if (checked.length === 0) {
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(join(cacheDir, key), `${pkg.name}\n`);
  }
  return [...found, ...checked];
}

function indent(text) {
  return text
    .split("\n")
    .map((l) => `      ${l}`)
    .join("\n");
}

async function main(argv) {
  const filters = argv.flatMap((a, i) => (argv[i - 1] === "--filter" ? [a] : []));
  const started = performance.now();
  const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const packages = publishedPackages(root).filter((p) => filters.length === 0 || filters.includes(p.name));
  if (packages.length === 0) throw new Error(`no published package matches ${filters.join(", ")}`);
  const dest = mkdtempSync(join(tmpdir(), "antler-pack-lint-"));
  try {
    // One pnpm process packs them all, two at a time.
    // Named one by one: `pnpm pack -r` alone packs the private examples too.
    const select = ["-r", ...packages.flatMap((p) => ["--filter", p.name])];
    const [pnpmCmd, pnpmArgs] = pnpmCommand();
    const packed = await run(
      pnpmCmd,
      [...pnpmArgs, "pack", ...select, "--workspace-concurrency", String(CONCURRENCY), "--pack-destination", dest, "--json"],
      root,
    );
    if (packed.code !== 0) throw new Error(`pnpm pack failed:\n${packed.out}`);
    const tarballs = tarballsByName(packed.out, dest);

    const failures = [];
    const stats = { cached: 0 };
    const queue = [...packages];
    const worker = async () => {
      for (let pkg = queue.shift(); pkg; pkg = queue.shift()) {
        const tarball = tarballs.get(pkg.name);
        const found = tarball ? await lintOne(pkg, tarball, rootManifest, stats) : ["pnpm pack made no tarball"];
        if (found.length > 0) failures.push({ pkg, found });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (failures.length > 0) {
      failures.sort((a, b) => a.pkg.name.localeCompare(b.pkg.name));
      for (const { pkg, found } of failures)
        console.error(`${pkg.name} (${relative(root, pkg.dir)}):\n${found.map((f) => `  - ${f}`).join("\n")}`);
      console.error(`\n✖ packaging lint: ${failures.length} of ${packages.length} packages have problems (${seconds} s)`);
      return 1;
    }
    const reused = stats.cached > 0 ? `; ${stats.cached} unchanged since their last clean check` : "";
    console.log(
      `packaging lint: ${packages.length} packages clean: publint, attw (esm-only), npm publish --dry-run, metadata (${seconds} s${reused})`,
    );
    return 0;
  } finally {
    rmSync(dest, { recursive: true, force: true });
  }
}

/** `pnpm pack --json` prints one JSON object per package (an array when recursive); map name -> tarball path. */
function tarballsByName(output, dest) {
  const map = new Map();
  const start = output.search(/[[{]/);
  if (start < 0) return map;
  let parsed;
  try {
    parsed = JSON.parse(output.slice(start));
  } catch {
    throw new Error(`could not read pnpm pack --json output:\n${output}`);
  }
  for (const entry of Array.isArray(parsed) ? parsed : [parsed]) {
    map.set(entry.name, entry.filename.startsWith("/") ? entry.filename : join(dest, entry.filename));
  }
  return map;
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      console.error(`✖ ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    },
  );
}
