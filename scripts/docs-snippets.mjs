// The code blocks of README.md, docs/**/*.md and every package README, checked the way a reader would use them:
// ```ts blocks are type-checked against the workspace packages (one `tsc` for all of them), ```yaml blocks that are
// config.yaml files go through the real `antler config check`, and every other ```yaml block must parse.
//
// A block that goes on with the example of the TypeScript block before it is marked `<!-- snippet: continues -->`
// on the line before it, and is checked after that block. A block that cannot stand alone (a method body, one key
// of a bigger file) is marked `<!-- snippet: fragment: <why> -->`; the reason is required. Keep fragments rare: a
// wrong example should be fixed.
//
// Usage: node scripts/docs-snippets.mjs [--root DIR] [--file X.md ...] [--cache DIR]
//        (after `pnpm build`; exit 1 with file:line for each problem; --file checks only those Markdown files)
//        node scripts/docs-snippets.mjs config-check <job.json>   (internal: the config checks, in one process)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { publishedPackages } from "./workspace-packages.mjs";

export const CACHE_DIR = "node_modules/.cache/docs-snippets";
const TS_LANGS = new Set(["ts", "typescript"]);
const YAML_LANGS = new Set(["yaml", "yml"]);
const MARKER = /^\s*<!--\s*snippet:\s*fragment\b(.*?)-->\s*$/;
const CONTINUES = /^\s*<!--\s*snippet:\s*continues\s*-->\s*$/;

/** README.md, docs/**\/*.md and packages/**\/README.md, as the link check reads them. */
export function markdownFiles(root) {
  const files = [join(root, "README.md")];
  const walk = (dir, keep) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name === "node_modules" || entry.name === "dist" || entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path, keep);
      else if (keep(entry.name)) files.push(path);
    }
  };
  walk(join(root, "docs"), (name) => name.endsWith(".md"));
  walk(join(root, "packages"), (name) => name === "README.md");
  return files;
}

/**
 * The fenced code blocks of one Markdown text: `{ lang, line, code, fragment }`, where `line` is the 1-based line of
 * the first code line, `fragment` the reason given by a `<!-- snippet: fragment: why -->` marker right before it (a
 * blank line between them is allowed), and problems for markers without a reason.
 */
export function extractBlocks(text) {
  const blocks = [];
  const problems = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)\s*(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang, rest] = open;
    const body = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(lines[j]);
      if (close && close[1][0] === fence[0] && close[1].length >= fence.length) break;
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j].trimStart());
    }
    let k = i - 1;
    if (k >= 0 && lines[k].trim() === "") k--;
    const marker = k >= 0 ? MARKER.exec(lines[k]) : null;
    let fragment;
    if (marker) {
      fragment = marker[1].replace(/^\s*[:—-]\s*/, "").trim();
      if (!fragment)
        problems.push({
          line: k + 1,
          message: "a `snippet: fragment` marker needs a reason: <!-- snippet: fragment: why it cannot compile alone -->",
        });
    }
    const continues = k >= 0 && CONTINUES.test(lines[k]);
    blocks.push({
      lang: lang.toLowerCase(),
      info: rest.trim(),
      line: i + 2,
      code: body.join("\n"),
      fragment: fragment || undefined,
      continues,
    });
    i = j;
  }
  return { blocks, problems };
}

/** Every block of every file: `{ file (relative to root), lang, line, code, fragment }`, plus marker problems. */
export function collectSnippets(root, files = markdownFiles(root)) {
  const snippets = [];
  const problems = [];
  for (const path of files) {
    const file = relative(root, path).split("\\").join("/");
    const { blocks, problems: found } = extractBlocks(readFileSync(path, "utf8"));
    for (const b of blocks) snippets.push({ file, ...b });
    for (const p of found) problems.push(`${file}:${p.line}: ${p.message}`);
  }
  return { snippets, problems };
}

// ---- the sandbox the snippets compile and load in -----------------------------------------------------------------

/**
 * A folder inside the repo whose node_modules holds every workspace package and their dependencies, as a user's
 * project that installed them would: snippets import `@antler/*` through the packages' own `exports` (built types).
 */
export function prepareSandbox(root, dir = join(root, CACHE_DIR)) {
  rmSync(dir, { recursive: true, force: true });
  const modules = join(dir, "node_modules");
  mkdirSync(modules, { recursive: true });
  const linked = new Set();
  const link = (name, target) => {
    if (linked.has(name) || !existsSync(target)) return;
    linked.add(name);
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(target, join(modules, name), "junction");
  };
  const packages = publishedPackages(root);
  for (const pkg of packages) link(pkg.name, pkg.dir);
  // Third-party packages next: the first workspace package that depends on one provides it.
  for (const pkg of packages) {
    const m = pkg.manifest;
    for (const dep of Object.keys({ ...m.dependencies, ...m.peerDependencies, ...m.devDependencies })) {
      link(dep, join(pkg.dir, "node_modules", dep));
    }
  }
  for (const dep of ["@types/node"]) link(dep, join(root, "node_modules", dep));
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "docs-snippets", private: true, type: "module" }, null, 2)}\n`);
  return dir;
}

// ---- TypeScript -------------------------------------------------------------------------------------------------

const slugOf = (s) => `${s.file.replace(/[^a-zA-Z0-9]+/g, "_")}_L${s.line}`;

/**
 * Type-checks the TypeScript snippets in one `tsc` run; each error is reported at its Markdown `file:line`.
 * Each block is its own module (so two blocks may declare the same names) with top-level await allowed. A block
 * marked `<!-- snippet: continues -->` is checked after the TypeScript block before it in the same file (and that
 * one's own predecessors), as the reader would run them: one example told in several blocks.
 */
export function checkTypeScript(root, snippets, dir) {
  const all = snippets.filter((s) => TS_LANGS.has(s.lang));
  if (all.every((s) => s.fragment)) return [];
  const srcDir = join(dir, "ts");
  mkdirSync(srcDir, { recursive: true });
  const byFile = new Map();
  const chains = new Map(); // Markdown file -> the segments of its last TypeScript block
  const problems = new Set();
  for (const s of all) {
    const previous = chains.get(s.file);
    if (s.continues && !previous)
      problems.add(`${s.file}:${s.line - 1}: \`snippet: continues\` needs a TypeScript block before it in the same file`);
    const segments = [...(s.continues && previous ? previous : []), s];
    chains.set(s.file, segments);
    if (s.fragment) continue;
    const name = `${slugOf(s)}.ts`;
    writeFileSync(join(srcDir, name), `${segments.map((x) => x.code).join("\n")}\nexport {};\n`);
    byFile.set(name, segments);
  }
  /** The Markdown place of line `n` (1-based) of a generated file. */
  const place = (segments, n) => {
    let line = n;
    for (const seg of segments) {
      const count = seg.code.split("\n").length;
      if (line <= count) return `${seg.file}:${seg.line + line - 1}`;
      line -= count;
    }
    const last = segments[segments.length - 1];
    return `${last.file}:${last.line}`;
  };
  const tsconfig = {
    compilerOptions: {
      target: "ES2022",
      lib: ["ES2023"],
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      esModuleInterop: true,
      experimentalDecorators: true,
      types: ["node"],
      allowJs: false,
    },
    include: ["ts/*.ts"],
  };
  writeFileSync(join(dir, "tsconfig.json"), `${JSON.stringify(tsconfig, null, 2)}\n`);
  const tsc = join(root, "node_modules/typescript/bin/tsc");
  const res = spawnSync(process.execPath, [tsc, "-p", join(dir, "tsconfig.json"), "--pretty", "false"], { encoding: "utf8" });
  if (res.status === 0) return [...problems];
  const unplaced = [];
  for (const line of `${res.stdout}${res.stderr}`.split("\n")) {
    const m = /(?:^|[\\/])ts[\\/]([^\\/(]+\.ts)\((\d+),(\d+)\): error (TS\d+: .*)$/.exec(line);
    const segments = m && byFile.get(m[1]);
    if (segments) {
      problems.add(`${place(segments, Number(m[2]))}: ${m[4]}`); // a block that others continue: reported once
    } else if (/error TS\d+/.test(line)) unplaced.push(line);
  }
  if (problems.size === 0 && unplaced.length === 0) unplaced.push(`tsc failed: ${res.stderr || res.stdout}`.trim());
  return [...problems, ...unplaced];
}

// ---- YAML -------------------------------------------------------------------------------------------------------

/**
 * The config.yaml top-level keys (the composed schema's, so plugin sections like `title:` and `subagents:` count
 * too), and the plugin that owns each plugin section.
 */
export async function configKeys(root) {
  const { composedSchema } = await import("./docs-config-reference.mjs");
  const { schema, plugins } = await composedSchema(root);
  const owners = {};
  for (const { plugin } of plugins) for (const key of Object.keys(plugin.configSections ?? {})) owners[key] = plugin.name;
  return { keys: new Set(Object.keys(schema.properties)), owners };
}

function loadYaml(root) {
  const require = createRequire(join(root, "packages/kernel/package.json"));
  return require("yaml");
}

/**
 * Parses every YAML snippet; the ones that are config files (a mapping with at least one config.yaml top-level key)
 * are returned as `configs` for `antler config check`. Fragments must parse too.
 */
export function sortYaml(root, snippets, keys) {
  const YAML = loadYaml(root);
  const problems = [];
  const configs = [];
  for (const s of snippets.filter((x) => YAML_LANGS.has(x.lang))) {
    const docs = YAML.parseAllDocuments(s.code, { prettyErrors: false });
    const errors = docs.flatMap((d) => d.errors);
    if (errors.length > 0) {
      for (const e of errors)
        problems.push(`${s.file}:${s.line + (e.linePos?.[0]?.line ?? 1) - 1}: YAML does not parse: ${e.message.split("\n")[0]}`);
      continue;
    }
    const value = docs.length === 1 ? docs[0].toJS() : undefined;
    const top = value && typeof value === "object" && !Array.isArray(value) ? Object.keys(value) : [];
    if (!s.fragment && top.some((k) => keys.has(k))) configs.push(s); // a misspelt key must not hide a config from the check
  }
  return { problems, configs };
}

/** Runs `antler config check` (the built CLI, in one child process) on each config snippet. */
export function checkConfigs(root, configs, dir, owners = {}) {
  if (configs.length === 0) return [];
  const yamlDir = join(dir, "yaml");
  mkdirSync(yamlDir, { recursive: true });
  const jobs = configs.map((s) => {
    const path = join(yamlDir, `${slugOf(s)}.yaml`);
    writeFileSync(path, `${s.code}\n`);
    return { path, file: s.file, line: s.line };
  });
  const jobFile = join(dir, "config-jobs.json");
  writeFileSync(jobFile, JSON.stringify({ root, jobs, owners }));
  const res = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "config-check", jobFile], {
    encoding: "utf8",
    cwd: yamlDir,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.status !== 0 && !res.stdout.trim()) return [`antler config check could not run: ${res.stderr.trim()}`];
  return JSON.parse(res.stdout).map((p) => `${p.file}:${p.line}: antler config check: ${p.output}`);
}

/**
 * The config.yaml a reader copies often names secrets by `$VAR`: check it as if those were set, to values of the
 * right shape (a Redis URL for a Redis variable, a URL for a URL, a long enough secret otherwise). A variable with a
 * default in the snippet (`${VAR:-x}`) keeps its default.
 */
const PLACEHOLDERS = {
  TELEGRAM_BOT_TOKEN: "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11",
  SLACK_BOT_TOKEN: "xoxb-0000000000-0000000000-docsplaceholder",
  SLACK_APP_TOKEN: "xapp-1-A0000000000-0000000000-docsplaceholder",
  FEISHU_APP_ID: "cli_a1b2c3d4e5f6",
};

function snippetEnv(code) {
  const env = { ...process.env };
  delete env.ANTLER_LOG_LEVEL;
  delete env.ANTLER_CONFIG;
  for (const m of code.matchAll(/\$\{?([A-Z][A-Z0-9_]*)(:-)?/g)) {
    const name = m[1];
    if (m[2] || env[name] !== undefined) continue;
    if (PLACEHOLDERS[name]) env[name] = PLACEHOLDERS[name];
    else if (/REDIS/.test(name)) env[name] = "redis://127.0.0.1:6379";
    else if (/POSTGRES|DATABASE|PG_/.test(name)) env[name] = "postgres://postgres@127.0.0.1:5432/docs";
    else if (/URL|ENDPOINT/.test(name)) env[name] = "http://127.0.0.1:8080";
    else env[name] = `docs${name.replace(/_/g, "")}0123456789`; // letters and digits, distinct per variable
  }
  return env;
}

/**
 * A snippet that shows one plugin-owned section (`approval:`, `memory:`) and no `plugins:` list is checked with
 * the owning plugin enabled, as the reader's config would have it; appended at the end, so line numbers hold.
 * The runtime comes with the default preset.
 */
function withOwners(text, YAML, owners) {
  const value = YAML.parse(text);
  if (!value || typeof value !== "object" || "plugins" in value) return text;
  const needed = [...new Set(Object.keys(value).map((k) => owners[k]))].filter((p) => p && p !== "@antler/plugin-runtime");
  return needed.length ? `${text}\nplugins:\n${needed.map((p) => `  - package: "${p}"`).join("\n")}\n` : text;
}

async function runConfigJobs(jobFile) {
  const { root, jobs, owners } = JSON.parse(readFileSync(jobFile, "utf8"));
  const { main } = await import(pathToFileURL(join(root, "node_modules/@antler/kernel/dist/bundle/cli.js")).href);
  const YAML = loadYaml(root);
  const failures = [];
  for (const job of jobs) {
    const code = readFileSync(job.path, "utf8");
    writeFileSync(job.path, withOwners(code, YAML, owners));
    let out = "";
    const sink = {
      write(chunk) {
        out += String(chunk);
        return true;
      },
    };
    const status = await main(["config", "check", job.path], { cwd: dirname(job.path), env: snippetEnv(code), stdout: sink, stderr: sink });
    if (status === 0) continue;
    // `<file>:3:5 key: problem` lines point into the Markdown instead.
    const output = out
      .trim()
      .split(`${job.path}:`)
      .map((part, i) => (i === 0 ? part : part.replace(/^(\d+):(\d+)/, (_, l, c) => `${job.file}:${job.line + Number(l) - 1}:${c}`)))
      .join("")
      .split(job.path)
      .join("<snippet>");
    failures.push({ file: job.file, line: job.line, output: output.replace(/\n\s*hint: Run `antler config check`.*$/m, "") });
  }
  process.stdout.write(JSON.stringify(failures));
}

// ---- all of it --------------------------------------------------------------------------------------------------

/** Every problem with the snippets of the given Markdown files (all of them by default), as `file:line: message`. */
export async function checkSnippets(root, { files, dir } = {}) {
  const { snippets, problems } = collectSnippets(root, files);
  const sandbox = prepareSandbox(root, dir);
  const { keys, owners } = await configKeys(root);
  const { problems: yamlProblems, configs } = sortYaml(root, snippets, keys);
  return {
    snippets,
    configs,
    problems: [...problems, ...yamlProblems, ...checkConfigs(root, configs, sandbox, owners), ...checkTypeScript(root, snippets, sandbox)],
  };
}

async function cli() {
  const args = process.argv.slice(2);
  if (args[0] === "config-check") {
    await runConfigJobs(args[1]);
    return 0;
  }
  const valuesOf = (flag) => args.flatMap((a, i) => (a === flag && args[i + 1] ? [args[i + 1]] : []));
  const root = resolve(valuesOf("--root")[0] ?? join(dirname(fileURLToPath(import.meta.url)), ".."));
  const files = valuesOf("--file").map((f) => resolve(f));
  const dir = valuesOf("--cache")[0];
  const { snippets, configs, problems } = await checkSnippets(root, {
    files: files.length ? files : undefined,
    dir: dir ? resolve(dir) : undefined,
  });
  const ts = snippets.filter((s) => TS_LANGS.has(s.lang));
  const yaml = snippets.filter((s) => YAML_LANGS.has(s.lang));
  const fragments = snippets.filter((s) => s.fragment).length;
  console.log(
    `${ts.length} TypeScript and ${yaml.length} YAML snippets (${configs.length} config files), ${fragments} marked as fragments`,
  );
  for (const p of problems) console.error(p);
  return problems.length === 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await cli();
}
