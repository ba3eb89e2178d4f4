import { existsSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
// semver's subpaths: its index loads every function and range helper (about 50 files) at every CLI start.
import satisfies from "semver/functions/satisfies.js";
import valid from "semver/functions/valid.js";
import validRange from "semver/ranges/valid.js";
import { z } from "zod";
import { type PluginAuthoringApi, pluginAuthoringApi } from "./authoring-api.js";
import type { KernelConfig, PluginEntryConfig } from "./config/schema.js";
import { AntlerError, ErrorCodes } from "./errors.js";
import { type AntlerPlugin, isBrandedPlugin, type PluginOrigin } from "./plugin.js";
import { presetPackages } from "./preset.js";
import { KERNEL_VERSION } from "./version.js";

export interface PluginCandidate {
  readonly plugin: AntlerPlugin;
  readonly origin: PluginOrigin;
  /** The raw `config:` value from the entry, validated later against the plugin's schema. */
  readonly rawConfig: unknown;
  /** Index in `plugins:` for config entries; used to build `plugins[i].config.<key>` paths. */
  readonly entryIndex?: number | undefined;
}

const manifestSchema = z.object({
  name: z.string().min(1, "name must be a non-empty string"),
  version: z.string().refine((v) => valid(v) !== null, "version must be a semver version such as 1.0.0"),
  kernel: z.string().refine((v) => validRange(v) !== null, "kernel must be a semver range such as ^0.1.0"),
  description: z.string().optional(),
  dependsOn: z.array(z.string().min(1)).optional(),
  configSchema: z
    .custom<z.ZodType>(
      (v) => v === undefined || (typeof v === "object" && v !== null && typeof (v as z.ZodType).safeParse === "function"),
      { message: "configSchema must be a zod schema" },
    )
    .optional(),
  setup: z.custom<(ctx: unknown) => void>((v) => typeof v === "function", { message: "setup must be a function" }),
});

export function validateManifest(value: unknown, where: string): AntlerPlugin {
  const result = manifestSchema.safeParse(value);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join(".") || "(plugin)"}: ${i.message}`).join("; ");
    throw new AntlerError(ErrorCodes.PLUGIN_INVALID_MANIFEST, `invalid plugin manifest: ${problems}`, {
      where,
      hint: "Build the plugin with definePlugin({ name, version, kernel, setup }).",
    });
  }
  const plugin = value as AntlerPlugin;
  if (!satisfies(KERNEL_VERSION, plugin.kernel, { includePrerelease: true })) {
    throw new AntlerError(
      ErrorCodes.PLUGIN_KERNEL_MISMATCH,
      `plugin "${plugin.name}" needs kernel ${plugin.kernel}, but this is @antler/kernel ${KERNEL_VERSION}`,
      { where, hint: "Install a plugin version built for this kernel, or upgrade @antler/kernel." },
    );
  }
  return plugin;
}

function looksLikePath(spec: string): boolean {
  return spec.startsWith("./") || spec.startsWith("../") || isAbsolute(spec) || /\.(c|m)?js$/.test(spec);
}

/**
 * Imports every enabled `plugins:` entry. Paths resolve against the config folder, packages from it too: the
 * package's `./plugin` export if it has one (a light entry that default-exports the plugin), else its main entry.
 */
export async function importConfiguredPlugins(entries: readonly PluginEntryConfig[], configDir: string): Promise<PluginCandidate[]> {
  const out: PluginCandidate[] = [];
  for (const [index, entry] of entries.entries()) {
    const where = `plugins[${index}]`;
    const normalized =
      typeof entry === "string"
        ? looksLikePath(entry)
          ? { path: entry, enabled: true, config: undefined }
          : { package: entry, enabled: true, config: undefined }
        : entry;
    if (!normalized.enabled) continue;
    const isPath = normalized.path !== undefined;
    const spec = (normalized.path ?? normalized.package) as string;
    const file = isPath
      ? resolvePluginPath(spec, configDir, where)
      : (resolvePackageFrom(`${spec}/plugin`, configDir) ?? resolvePluginPackage(spec, configDir, where));
    const mod = await importModule(file, spec, where);
    const plugin = await pluginFromModule(mod, where, spec);
    out.push({ plugin, origin: { kind: isPath ? "path" : "package", spec, where, file }, rawConfig: normalized.config, entryIndex: index });
  }
  return out;
}

/**
 * Imports the default preset's plugins, skipping any plugin already named in code or `plugins:`. Each package's
 * light `./plugin` entry is imported as the kernel itself sees it (so a distribution that depends on the
 * packages, and tests, get the same module instances as their own imports), then from the config folder.
 */
export async function importPresetPlugins(
  config: Pick<KernelConfig, "storage">,
  configDir: string,
  named: ReadonlySet<string>,
): Promise<PluginCandidate[]> {
  const out: PluginCandidate[] = [];
  const missing: string[] = [];
  for (const spec of presetPackages(config)) {
    if (named.has(spec)) continue;
    const where = `preset default (${spec})`;
    let mod: Record<string, unknown> | undefined;
    try {
      mod = (await import(`${spec}/plugin`)) as Record<string, unknown>;
    } catch (err) {
      if (!isModuleNotFound(err, spec)) throw pluginImportFailed(spec, where, err);
      const file = resolvePackageFrom(`${spec}/plugin`, configDir);
      if (!file) {
        missing.push(spec);
        continue;
      }
      mod = await importModule(file, spec, where);
    }
    const plugin = await pluginFromModule(mod, where, spec);
    out.push({ plugin, origin: { kind: "preset", spec, where }, rawConfig: undefined });
  }
  if (missing.length > 0) {
    throw new AntlerError(
      ErrorCodes.PLUGIN_NOT_FOUND,
      `the default preset needs ${missing.join(", ")}, which ${missing.length === 1 ? "is" : "are"} not installed`,
      {
        where: "preset",
        hint: `Install ${missing.length === 1 ? "it" : "them"} next to config.yaml (npm install ${missing.join(" ")}), or set \`preset: none\` in config.yaml and list your plugins under \`plugins:\`.`,
      },
    );
  }
  return out;
}

function isModuleNotFound(err: unknown, spec: string): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  const message = String((err as Error)?.message ?? "");
  return (
    (code === "ERR_MODULE_NOT_FOUND" ||
      code === "ERR_PACKAGE_PATH_NOT_EXPORTED" ||
      /Cannot find (module|package)|Failed to load url/.test(message)) &&
    message.includes(spec)
  );
}

function pluginImportFailed(spec: string, where: string, err: unknown): AntlerError {
  return new AntlerError(ErrorCodes.PLUGIN_NOT_FOUND, `plugin "${spec}" failed to import: ${(err as Error)?.message ?? String(err)}`, {
    where,
    cause: err,
    hint: "Fix the module so that it imports on its own (node -e \"import('<file>')\").",
  });
}

/** Resolves a module named in config.yaml: a path (relative to the config folder) or a package name. */
export function resolveConfiguredModule(spec: string, configDir: string, where: string): string {
  return looksLikePath(spec) ? resolvePluginPath(spec, configDir, where) : resolvePluginPackage(spec, configDir, where);
}

export async function importConfiguredModule(spec: string, configDir: string, where: string): Promise<Record<string, unknown>> {
  return importModule(resolveConfiguredModule(spec, configDir, where), spec, where);
}

function resolvePluginPath(spec: string, configDir: string, where: string): string {
  const file = resolve(configDir, spec);
  if (!existsSync(file) || !statSync(file).isFile()) {
    throw new AntlerError(ErrorCodes.PLUGIN_NOT_FOUND, `plugin file ${file} does not exist`, {
      where: `${where}.path`,
      hint: "Paths are relative to the folder of config.yaml.",
    });
  }
  return file;
}

/** A package (or package subpath) resolved the way `require` would from `dir`, or undefined. */
function resolvePackageFrom(spec: string, dir: string): string | undefined {
  try {
    return createRequire(join(dir, "__antler__.js")).resolve(spec);
  } catch {
    return undefined;
  }
}

/**
 * Resolves a package the way Node would from the config folder. `require.resolve` covers packages with a
 * `default`/`require` export; ESM-only packages (`import` condition only) are found by walking node_modules.
 */
function resolvePluginPackage(spec: string, configDir: string, where: string): string {
  const esm = resolvePackageFrom(spec, configDir) ?? resolveEsmPackage(spec, configDir);
  if (esm) return esm;
  try {
    // Last resort: whatever the kernel itself can see (a distribution that depends on the plugin).
    return createRequire(import.meta.url).resolve(spec);
  } catch {
    throw new AntlerError(ErrorCodes.PLUGIN_NOT_FOUND, `plugin package "${spec}" is not installed`, {
      where: `${where}.package`,
      hint: `Install it next to config.yaml (npm install ${spec}), or load a local file with \`path:\`.`,
    });
  }
}

function resolveEsmPackage(spec: string, fromDir: string): string | undefined {
  let dir = resolve(fromDir);
  for (;;) {
    const pkgDir = join(dir, "node_modules", spec);
    const pkgJson = join(pkgDir, "package.json");
    if (existsSync(pkgJson)) {
      const pkg = JSON.parse(readFileSync(pkgJson, "utf8")) as { exports?: unknown; main?: string; module?: string };
      const target = exportTarget(pkg.exports) ?? pkg.module ?? pkg.main ?? "index.js";
      return join(pkgDir, target);
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function exportTarget(exports: unknown): string | undefined {
  if (typeof exports === "string") return exports;
  if (exports === null || typeof exports !== "object") return undefined;
  const record = exports as Record<string, unknown>;
  const root = "." in record ? record["."] : record;
  if (typeof root === "string") return root;
  if (root && typeof root === "object") {
    for (const condition of ["import", "node", "default"]) {
      const found = exportTarget((root as Record<string, unknown>)[condition]);
      if (found) return found;
    }
  }
  return undefined;
}

async function importModule(file: string, spec: string, where: string): Promise<Record<string, unknown>> {
  try {
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw pluginImportFailed(spec, where, err);
  }
}

async function pluginFromModule(mod: Record<string, unknown>, where: string, spec: string): Promise<AntlerPlugin> {
  let candidate = mod.default;
  if (candidate === undefined) {
    const names = Object.keys(mod).filter((k) => k !== "default");
    throw new AntlerError(ErrorCodes.PLUGIN_NO_DEFAULT_EXPORT, `module "${spec}" has no default export`, {
      where,
      hint: `Default-export the plugin: \`export default definePlugin({...})\`.${names.length ? ` The module exports: ${names.join(", ")}.` : ""}`,
    });
  }
  if (typeof candidate === "function") {
    candidate = await (candidate as (api: PluginAuthoringApi) => unknown)(pluginAuthoringApi);
  }
  if (
    candidate === null ||
    typeof candidate !== "object" ||
    (!isBrandedPlugin(candidate) && typeof (candidate as { setup?: unknown }).setup !== "function")
  ) {
    throw new AntlerError(ErrorCodes.PLUGIN_NO_DEFAULT_EXPORT, `the default export of "${spec}" is not a plugin`, {
      where,
      hint: "Default-export definePlugin({...}), or a function (api) => api.definePlugin({...}).",
    });
  }
  return validateManifest(candidate, where);
}

/**
 * Checks names and dependencies and returns the load order: dependencies first, otherwise the order given.
 * Errors name the offending entry's config path.
 */
export function orderPlugins(candidates: readonly PluginCandidate[]): PluginCandidate[] {
  const byName = new Map<string, PluginCandidate>();
  for (const c of candidates) {
    const existing = byName.get(c.plugin.name);
    if (existing) {
      throw new AntlerError(ErrorCodes.PLUGIN_DUPLICATE, `plugin "${c.plugin.name}" is loaded twice (first at ${existing.origin.where})`, {
        where: c.origin.where,
        hint: "Remove one of the two entries.",
      });
    }
    byName.set(c.plugin.name, c);
  }
  for (const c of candidates) {
    for (const dep of c.plugin.dependsOn ?? []) {
      if (!byName.has(dep)) {
        throw new AntlerError(ErrorCodes.PLUGIN_MISSING_DEPENDENCY, `plugin "${c.plugin.name}" depends on "${dep}", which is not loaded`, {
          where: c.origin.where,
          hint: `Add "${dep}" to \`plugins:\` in config.yaml (before or after; order is worked out from dependsOn).`,
        });
      }
    }
  }
  const position = new Map(candidates.map((c, i) => [c.plugin.name, i]));
  const remaining = new Map(candidates.map((c) => [c.plugin.name, new Set(c.plugin.dependsOn ?? [])]));
  const ordered: PluginCandidate[] = [];
  while (remaining.size > 0) {
    let next: string | undefined;
    for (const [name, deps] of remaining) {
      if (deps.size === 0 && (next === undefined || (position.get(name) as number) < (position.get(next) as number))) next = name;
    }
    if (next === undefined) {
      const cycle = findCycle(remaining);
      const first = byName.get(cycle[0] as string) as PluginCandidate;
      throw new AntlerError(ErrorCodes.PLUGIN_DEPENDENCY_CYCLE, `plugins depend on each other in a cycle: ${cycle.join(" → ")}`, {
        where: first.origin.where,
        hint: "Break the cycle: move the shared part into a plugin both can depend on.",
        details: { cycle, entries: cycle.map((n) => byName.get(n)?.origin.where) },
      });
    }
    ordered.push(byName.get(next) as PluginCandidate);
    remaining.delete(next);
    for (const deps of remaining.values()) deps.delete(next);
  }
  return ordered;
}

function findCycle(graph: Map<string, Set<string>>): string[] {
  const start = graph.keys().next().value as string;
  const path: string[] = [];
  const seen = new Map<string, number>();
  let current: string | undefined = start;
  while (current !== undefined && !seen.has(current)) {
    seen.set(current, path.length);
    path.push(current);
    current = [...(graph.get(current) ?? [])].find((d) => graph.has(d));
  }
  if (current === undefined) return path;
  return [...path.slice(seen.get(current)), current];
}
