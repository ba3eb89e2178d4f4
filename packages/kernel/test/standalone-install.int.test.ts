// A third-party plugin author's first hour: a fresh project outside the workspace installs only @antler/kernel
// (from the tarball `pnpm pack` makes), defines a plugin and tests it with @antler/kernel/testing, and no native
// module is compiled on the way. The steps run in order and share one temp project.
//
// Offline on purpose: `pnpm install --offline` resolves only from pnpm's metadata cache, which a frozen-lockfile
// workspace install never fills, so a project without a lockfile fails with ERR_PNPM_NO_OFFLINE_META. The test
// therefore writes the project's pnpm-lock.yaml from the workspace's: the kernel's dependencies and vitest at the
// versions the workspace is tested with, fetched from the workspace's own store with no network.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, expect, it } from "vitest";
import YAML from "yaml";
import { describeUnless } from "../src/testing/index.js";
import { cleanEnv, commandMissing, killRunning, pnpmCommand, REPO_ROOT, type RunResult, run } from "./install-helpers.js";

const KERNEL_DIR = join(REPO_ROOT, "packages/kernel");
/** Packages a plugin author must not get with the kernel: database drivers and the database checkpointers. */
const FORBIDDEN_PACKAGES = [
  "better-sqlite3",
  "sqlite3",
  "pg",
  "@langchain/langgraph-checkpoint-sqlite",
  "@langchain/langgraph-checkpoint-postgres",
];
const STEP_TIMEOUT_MS = 240_000;

/** pnpm registers each project that uses a store under `<store>/projects`; drop this test's link so none dangles. */
function forgetProject(storePath: string, projectDir: string): void {
  const projects = join(storePath, "projects");
  if (!existsSync(projects)) return;
  for (const name of readdirSync(projects)) {
    const link = join(projects, name);
    try {
      if (resolve(projects, readlinkSync(link)) === projectDir) rmSync(link);
    } catch {
      // not a link, or already gone
    }
  }
}

function runPnpm(args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<RunResult> {
  const [command, full] = pnpmCommand(args);
  return run(command, full, options);
}

/** `pnpm` must be on PATH to pack and install; the reason to skip when it is not. */
function pnpmMissing(): Promise<string | undefined> {
  return commandMissing(...pnpmCommand(["--version"]), "pnpm");
}

type Lockfile = {
  settings?: unknown;
  importers: Record<string, Record<string, Record<string, { specifier: string; version: string }>>>;
  packages: Record<string, unknown>;
  snapshots: Record<string, Record<string, Record<string, string>> | undefined>;
};

/**
 * The project's lockfile, cut from the workspace lockfile: the kernel's production dependencies and the root's
 * vitest with everything they reach, plus the kernel tarball itself (pnpm checks its sha512 integrity).
 */
function projectLockfile(tarballName: string, tarballBytes: Buffer): { lockfile: string; vitestSpecifier: string } {
  const workspace = YAML.parse(readFileSync(join(REPO_ROOT, "pnpm-lock.yaml"), "utf8")) as Lockfile;
  const manifest = JSON.parse(readFileSync(join(KERNEL_DIR, "package.json"), "utf8")) as {
    version: string;
    peerDependencies?: Record<string, string>;
    peerDependenciesMeta?: unknown;
  };
  const vitest = workspace.importers["."]?.devDependencies?.vitest;
  if (!vitest) throw new Error("the workspace lockfile has no root vitest to reuse");
  const kernelImporter = workspace.importers["packages/kernel"] ?? {};
  const kernelDeps: Record<string, string> = {};
  for (const field of ["dependencies", "optionalDependencies"]) {
    for (const [name, dep] of Object.entries(kernelImporter[field] ?? {})) {
      if (dep.version.startsWith("link:"))
        throw new Error(`@antler/kernel depends on the workspace package ${name}; a packed kernel cannot`);
      kernelDeps[name] = dep.version;
    }
  }
  // The kernel's peers (LangChain, zod) resolve to the versions the workspace develops the kernel against; vitest
  // to the root's. The project gets them as the kernel's resolved peers, as pnpm's auto-install-peers would.
  for (const name of Object.keys(manifest.peerDependencies ?? {})) {
    if (name === "vitest") continue;
    const dep = kernelImporter.devDependencies?.[name];
    if (!dep) throw new Error(`the workspace lockfile has no devDependency ${name} of @antler/kernel to satisfy its peer`);
    kernelDeps[name] = dep.version;
  }
  if (manifest.peerDependencies?.vitest) kernelDeps.vitest = vitest.version;
  const peerSuffix = Object.keys(manifest.peerDependencies ?? {})
    .sort()
    .map((name) => `(${name}@${kernelDeps[name]})`)
    .join("");

  // A snapshot's dependency is `name: version(peers)`, or `alias: real-name@version` for an npm: alias.
  const snapshotKey = (name: string, version: string) => (/^\d/.test(version) ? `${name}@${version}` : version);
  const packageKey = (key: string) => (key.indexOf("(", 1) === -1 ? key : key.slice(0, key.indexOf("(", 1)));
  const packages: Record<string, unknown> = {};
  const snapshots: Record<string, unknown> = {};
  const queue = Object.entries(kernelDeps).map(([name, version]) => snapshotKey(name, version));
  while (queue.length > 0) {
    const key = queue.pop()!;
    if (key in snapshots) continue;
    const snapshot = workspace.snapshots[key];
    if (snapshot === undefined || !(packageKey(key) in workspace.packages))
      throw new Error(`the workspace lockfile has no entry for ${key}`);
    snapshots[key] = snapshot;
    packages[packageKey(key)] = workspace.packages[packageKey(key)];
    for (const field of ["dependencies", "optionalDependencies"]) {
      for (const [name, version] of Object.entries(snapshot?.[field] ?? {})) queue.push(snapshotKey(name, version));
    }
  }
  const ref = `file:../${tarballName}`;
  packages[`@antler/kernel@${ref}`] = {
    resolution: { integrity: `sha512-${createHash("sha512").update(tarballBytes).digest("base64")}`, tarball: ref },
    version: manifest.version,
    ...(manifest.peerDependencies && { peerDependencies: manifest.peerDependencies }),
    ...(manifest.peerDependenciesMeta !== undefined && { peerDependenciesMeta: manifest.peerDependenciesMeta }),
  };
  snapshots[`@antler/kernel@${ref}${peerSuffix}`] = { dependencies: kernelDeps };
  const lockfile = {
    lockfileVersion: "9.0",
    settings: workspace.settings,
    importers: {
      ".": {
        dependencies: { "@antler/kernel": { specifier: ref, version: `${ref}${peerSuffix}` } },
        devDependencies: { vitest: { specifier: vitest.specifier, version: vitest.version } },
      },
    },
    packages,
    snapshots,
  };
  return { lockfile: YAML.stringify(lockfile), vitestSpecifier: vitest.specifier };
}

/** Name of the package a `node_modules/.pnpm` entry holds: `@scope+name@1.0.0_peers` → `@scope/name`. */
function packageNameOfEntry(entry: string): string | undefined {
  const at = entry.indexOf("@", entry.startsWith("@") ? 1 : 0);
  return at > 0 ? entry.slice(0, at).replace("+", "/") : undefined;
}

/**
 * Every package directory in the isolated layout (`.pnpm/<entry>/node_modules/<name>`), and the files that show a
 * native build: a binding.gyp (the package compiles with node-gyp at install), a build/Release or build/Debug
 * folder (node-gyp's output), or a *.node addon in a package that has a binding.gyp. Prebuilt addons that a
 * platform package ships ready-made (vite's rolldown and lightningcss bindings) compile nothing and are not listed.
 */
function nativeBuildTraces(projectDir: string): string[] {
  const store = join(projectDir, "node_modules/.pnpm");
  const traces: string[] = [];
  const walk = (dir: string, hasGyp: boolean): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && entry.name === "node_modules") continue; // nested packages are visited from their own entry
      if (entry.isDirectory()) {
        if (entry.name === "build") traces.push(...["Release", "Debug"].map((sub) => join(path, sub)).filter((sub) => existsSync(sub)));
        walk(path, hasGyp);
      } else if (entry.isFile() && hasGyp && entry.name.endsWith(".node")) {
        traces.push(path);
      }
    }
  };
  for (const entry of readdirSync(store, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === "node_modules") continue;
    const modules = join(store, entry.name, "node_modules");
    const packageDirs = readdirSync(modules, { withFileTypes: true }).flatMap((d) =>
      d.name.startsWith("@") ? readdirSync(join(modules, d.name)).map((n) => join(modules, d.name, n)) : [join(modules, d.name)],
    );
    // Only the entry's own package is real here; the others are symlinks to their own entries.
    const own = packageDirs.find((dir) => dir.endsWith(`/${packageNameOfEntry(entry.name)}`));
    if (!own) continue;
    const hasGyp = existsSync(join(own, "binding.gyp"));
    if (hasGyp) traces.push(`${join(own, "binding.gyp")} (a node-gyp build)`);
    walk(own, hasGyp);
  }
  return traces.map((t) => t.slice(projectDir.length + 1));
}

const PLUGIN_SOURCE = (kernelRange: string) => `import { createToken, definePlugin } from "@antler/kernel";

/** What the plugin binds in the kernel's root scope. */
export const GREETING = createToken("standalone-greeter.greeting");

export default definePlugin({
  name: "standalone-greeter",
  version: "1.0.0",
  kernel: "${kernelRange}",
  setup(ctx) {
    ctx.provide(GREETING, { useValue: "hello from a plugin outside the workspace" });
    ctx.commands.add({
      name: "greet",
      summary: "Prints the greeting.",
      run(args, io) {
        io.stdout.write(\`\${io.kernel.scope.resolve(GREETING)}, \${args[0] ?? "world"}\\n\`);
        return 0;
      },
    });
  },
});
`;

const PLUGIN_TEST_SOURCE = `import { Writable } from "node:stream";
import { createTestKernel, runPluginConformance } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import greeter, { GREETING } from "./plugin.mjs";

runPluginConformance(greeter);

describe("standalone-greeter", () => {
  it("binds its token and runs its CLI command", async () => {
    const kernel = await createTestKernel({ plugins: [greeter] });
    try {
      expect(kernel.scope.resolve(GREETING)).toBe("hello from a plugin outside the workspace");
      const command = kernel.commands.find((c) => c.name === "greet");
      let out = "";
      const stdout = new Writable({ write(chunk, _enc, done) { out += chunk; done(); } });
      const code = await command.run(["antler"], { stdout, stderr: stdout, cwd: process.cwd(), env: {}, kernel });
      expect(code).toBe(0);
      expect(out).toBe("hello from a plugin outside the workspace, antler\\n");
    } finally {
      await kernel.close();
    }
  });
});
`;

const distMissing =
  existsSync(join(KERNEL_DIR, "dist/index.js")) && existsSync(join(KERNEL_DIR, "dist/testing/index.js"))
    ? undefined
    : "packages/kernel/dist is missing; run `pnpm run build` first";
const skipReason = distMissing ?? (await pnpmMissing());

describeUnless("a project outside the workspace that installs only @antler/kernel", skipReason, () => {
  // os.tmpdir() is outside /work, so pnpm finds no workspace above the project.
  const root = mkdtempSync(join(tmpdir(), "antler-standalone-"));
  const projectDir = join(root, "project");
  const state: { tarball?: string; storePath?: string; installed?: boolean; installOutput?: string } = {};

  afterAll(() => {
    killRunning();
    if (state.storePath) forgetProject(state.storePath, projectDir);
    rmSync(root, { recursive: true, force: true });
  });

  it(
    "packs @antler/kernel into a tarball with its dist and bin",
    async () => {
      const packed = await runPnpm(["pack", "--pack-destination", root], { cwd: KERNEL_DIR, env: cleanEnv(), timeoutMs: 120_000 });
      expect(packed.code, packed.output).toBe(0);
      const tarballs = readdirSync(root).filter((name) => name.endsWith(".tgz"));
      expect(tarballs).toHaveLength(1);
      state.tarball = tarballs[0];
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "installs the tarball and vitest with pnpm --offline from the workspace's store",
    async () => {
      expect(state.tarball, "the pack step failed").toBeDefined();
      const tarball = state.tarball!;
      const storePath = await runPnpm(["store", "path"], { cwd: REPO_ROOT, env: cleanEnv(), timeoutMs: 30_000 });
      expect(storePath.code, storePath.output).toBe(0);
      state.storePath = storePath.output.trim();
      const { lockfile, vitestSpecifier } = projectLockfile(tarball, readFileSync(join(root, tarball)));
      mkdirSync(projectDir);
      const manifest = {
        name: "standalone-greeter",
        private: true,
        type: "module",
        dependencies: { "@antler/kernel": `file:../${tarball}` },
        devDependencies: { vitest: vitestSpecifier },
      };
      writeFileSync(join(projectDir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
      writeFileSync(join(projectDir, "pnpm-lock.yaml"), lockfile);
      const install = await runPnpm(["install", "--offline", "--frozen-lockfile", "--store-dir", state.storePath], {
        cwd: projectDir,
        env: cleanEnv(),
        timeoutMs: STEP_TIMEOUT_MS - 30_000,
      });
      expect(install.code, install.output).toBe(0);
      expect(existsSync(join(projectDir, "node_modules/@antler/kernel/package.json"))).toBe(true);
      state.installed = true;
      state.installOutput = install.output;
    },
    STEP_TIMEOUT_MS,
  );

  it("installs no database driver and no database checkpointer with the kernel", () => {
    expect(state.installed, "the install step failed").toBe(true);
    const entries = readdirSync(join(projectDir, "node_modules/.pnpm"));
    const found = entries.filter((entry) => FORBIDDEN_PACKAGES.includes(packageNameOfEntry(entry) ?? ""));
    expect(
      found,
      `node_modules/.pnpm holds packages a plugin author should not get with @antler/kernel (${FORBIDDEN_PACKAGES.join(", ")})`,
    ).toEqual([]);
  });

  it("installs nothing that compiles a native module (no binding.gyp, no build/Release, no compiled *.node)", () => {
    expect(state.installed, "the install step failed").toBe(true);
    // pnpm 10 runs no dependency build script unless approved, so a package with a binding.gyp is listed even when
    // pnpm skipped its build: the author would have to approve a native compile (or live without the addon).
    const skipped = state.installOutput?.match(/Ignored build scripts: [^\n│]*/)?.[0]?.trim();
    expect(nativeBuildTraces(projectDir), `native build traces in the installed tree${skipped ? ` (pnpm: "${skipped}")` : ""}`).toEqual([]);
  });

  it(
    "defines a plugin and passes the test kit's conformance suite with the project's own vitest",
    async () => {
      expect(state.installed, "the install step failed").toBe(true);
      const kernelVersion = (
        JSON.parse(readFileSync(join(projectDir, "node_modules/@antler/kernel/package.json"), "utf8")) as { version: string }
      ).version;
      writeFileSync(join(projectDir, "plugin.mjs"), PLUGIN_SOURCE(`^${kernelVersion}`));
      writeFileSync(join(projectDir, "plugin.test.mjs"), PLUGIN_TEST_SOURCE);
      const result = await run("npx", ["--no", "vitest", "run", "--reporter=verbose"], {
        cwd: projectDir,
        env: cleanEnv(),
        timeoutMs: STEP_TIMEOUT_MS - 30_000,
      });
      expect(result.code, result.output).toBe(0);
      expect(result.output).toContain("plugin conformance: standalone-greeter");
      expect(result.output).toContain("binds its token and runs its CLI command");
      expect(result.output).toMatch(/Test Files\s+1 passed/);
      expect(result.output).toMatch(/Tests\s+\d+ passed/);
      expect(result.output).not.toMatch(/\d+ failed/);
    },
    STEP_TIMEOUT_MS,
  );
});
