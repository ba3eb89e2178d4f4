// `antler plugin new`: the scaffolder writes a plugin package whose own test (conformance kit + a scripted turn)
// passes as generated, run by vitest in a child process exactly as `npm test` would run it there.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { runCli } from "@antler/kernel/testing";
import { afterAll, describe, expect, it } from "vitest";
import { antlerClone, antlerRangeFor, invalidPluginName, nextSteps, PLUGIN_TARBALL_PACKAGES } from "../src/cli/plugin-new.js";
import { TEMPLATE_VERSIONS, toolPrefix } from "../src/cli/plugin-template.js";

const exec = promisify(execFile);
const REPO = resolve(import.meta.dirname, "../../../..");
const RUNTIME = resolve(import.meta.dirname, "..");
// Inside the runtime package (git-ignored `scratch/`), so the generated package finds the workspace's
// @antler/kernel, @antler/plugin-runtime, zod and vitest the way an installed one finds its node_modules.
const SCRATCH = join(RUNTIME, "scratch");
mkdirSync(SCRATCH, { recursive: true });
const made: string[] = [];
const scratchDir = () => {
  const dir = mkdtempSync(join(SCRATCH, "plugin-new-"));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

// Boots a kernel with the generated package's built entry, recording every module loaded (on the hooks' thread,
// so written synchronously), and prints the tools the plugin contributed.
const LOAD_HOOK = `import { writeSync } from "node:fs";
export async function load(url, context, next) {
  const result = await next(url, context);
  writeSync(2, "LOADED " + url + "\\n");
  return result;
}`;
const BOOT_PROBE = `import { register } from "node:module";
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(LOAD_HOOK)}`)});
const { default: plugin } = await import("./dist/index.js");
const { createKernel } = await import("@antler/kernel");
const kernel = await createKernel({ discover: false, builtins: false, config: { logging: { level: "error" } }, plugins: [plugin] });
process.stdout.write(JSON.stringify(kernel.plugins.find((p) => p.name === plugin.name).contributions.tools));
`;

describe("antler plugin new", () => {
  it("prints its usage for --help", async () => {
    const { code, out } = await runCli(["plugin", "new", "--help"], { cwd: scratchDir() });
    expect(code).toBe(0);
    expect(out).toContain("Usage: antler plugin new <name> [--dir <path>]");
  });

  it("refuses names that are not npm package names, or carry path characters, with exit 2 and nothing written", async () => {
    const cwd = scratchDir();
    for (const name of ["Acme-Notes", "acme notes", "../escape", "acme/notes/deep", "@acme", ".hidden", "node_modules"]) {
      const { code, err } = await runCli(["plugin", "new", name], { cwd });
      expect(code, name).toBe(2);
      expect(err, name).toContain(`${JSON.stringify(name)} is not a valid package name`);
    }
    const missing = await runCli(["plugin", "new"], { cwd });
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("give exactly one package name");
    expect(existsSync(join(cwd, "escape")) || existsSync(join(cwd, "acme"))).toBe(false);
    expect(invalidPluginName("@acme/antler-notes")).toBeNull();
  });

  it("never writes into a folder that exists and is not empty (exit 1)", async () => {
    const cwd = scratchDir();
    mkdirSync(join(cwd, "acme-notes"));
    writeFileSync(join(cwd, "acme-notes", "keep.txt"), "mine");
    const { code, err } = await runCli(["plugin", "new", "acme-notes"], { cwd });
    expect(code).toBe(1);
    expect(err).toContain("already exists and is not an empty folder; nothing was written");
    expect(readFileSync(join(cwd, "acme-notes", "keep.txt"), "utf8")).toBe("mine");
    expect(existsSync(join(cwd, "acme-notes", "package.json"))).toBe(false);
  });

  it("links the workspace's Antler inside a workspace package folder, and uses a version range anywhere else", () => {
    expect(antlerRangeFor(join(REPO, "packages", "plugins", "acme-notes"))).toBe("workspace:*");
    expect(antlerRangeFor(join(SCRATCH, "acme-notes"))).toBe(`^${TEMPLATE_VERSIONS.kernel}`);
    expect(antlerRangeFor(join(tmpdir(), "acme-notes"))).toBe(`^${TEMPLATE_VERSIONS.kernel}`);
  });

  it("prints pnpm steps for a package inside the workspace, where npm cannot read its workspace: links", async () => {
    const dir = mkdtempSync(join(REPO, "packages", "plugins", "scratch-plugin-new-"));
    made.push(dir);
    const { code, out } = await runCli(["plugin", "new", "acme-inside", "--dir", dir], { cwd: REPO });
    expect(code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).devDependencies["@antler/kernel"]).toBe("workspace:*");
    expect(out).toContain(
      `Next (inside the Antler workspace, pnpm links its packages): cd ${relative(REPO, dir)} && pnpm install && pnpm test`,
    );
    expect(out).not.toMatch(/(^|[^p])npm install/m);
  });

  it("prints steps that install packed tarballs outside the workspace, packed from the clone this CLI runs from", async () => {
    const cwd = scratchDir();
    const { code, out } = await runCli(["plugin", "new", "acme-outside"], { cwd });
    expect(code).toBe(0);
    expect(antlerClone()).toBe(REPO);
    expect(out).toContain("the @antler packages are not on the npm registry yet");
    expect(out).toContain(
      `cd ${REPO} && for p in ${PLUGIN_TARBALL_PACKAGES.join(" ")}; do (cd packages/$p && npx -y pnpm@${TEMPLATE_VERSIONS.pnpm} pack --pack-destination `,
    );
    // Each tarball named as `pnpm pack` names it, for every package the plugin's tests load.
    const install = out.split("\n").find((line) => line.includes("npm install --save-dev")) ?? "";
    expect(install.startsWith("  cd acme-outside && npm install --save-dev ")).toBe(true);
    expect(install.endsWith(" && npm test")).toBe(true);
    for (const folder of PLUGIN_TARBALL_PACKAGES) {
      const pkg = JSON.parse(readFileSync(join(REPO, "packages", folder, "package.json"), "utf8"));
      expect(install).toContain(`${pkg.name.slice(1).replace("/", "-")}-${pkg.version}.tgz`);
    }
    const runtimeDeps = Object.keys(JSON.parse(readFileSync(join(RUNTIME, "package.json"), "utf8")).dependencies).filter((d) =>
      d.startsWith("@antler/"),
    );
    for (const dep of runtimeDeps) expect(install, `the runtime's dependency ${dep}`).toContain(dep.slice(1).replace("/", "-"));
  });

  it("names a placeholder for the clone when the CLI runs from an installed kernel", () => {
    const lines = nextSteps({ dir: "/work/acme", cwd: "/work", inWorkspace: false, clone: undefined });
    expect(lines.join("\n")).toContain("cd <your Antler clone> && for p in");
    expect(lines.at(-1)).toMatch(/^ {2}cd acme && npm install --save-dev .*antler-kernel-\d+\.\d+\.\d+\.tgz .* && npm test$/);
  });

  it("prints the pack step with the workspace's pinned pnpm through npx, so it works where pnpm is not installed", () => {
    const steps = nextSteps({ dir: "/work/acme", cwd: "/work", inWorkspace: false, clone: "/src/antler" }).join("\n");
    expect(steps).toContain(`npx -y pnpm@${TEMPLATE_VERSIONS.pnpm} pack --pack-destination`);
    expect(steps).not.toMatch(/\(cd packages\/\$p && pnpm pack/);
  });

  it("pins the versions this repository uses", () => {
    const root = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
    const kernel = JSON.parse(readFileSync(join(REPO, "packages/kernel/package.json"), "utf8"));
    expect(TEMPLATE_VERSIONS).toEqual({
      pnpm: root.packageManager.replace(/^pnpm@/, ""),
      kernel: kernel.version,
      zod: kernel.devDependencies.zod,
      typescript: root.devDependencies.typescript,
      vitest: root.devDependencies.vitest,
    });
  });

  it.skipIf(!existsSync(join(REPO, "packages/kernel/dist/index.js")))(
    "writes a package whose test passes as generated and whose source type-checks against the kernel's types (needs a build)",
    async () => {
      const cwd = scratchDir();
      const { code, out } = await runCli(["plugin", "new", "@acme/antler-notes", "--dir", "notes"], { cwd });
      expect(code).toBe(0);
      const dir = join(cwd, "notes");
      expect(out).toContain(`Created plugin @acme/antler-notes in ${dir}`);
      for (const file of ["package.json", "tsconfig.json", "vitest.config.ts", "src/index.ts", "test/plugin.test.ts", "README.md"]) {
        expect(existsSync(join(dir, file)), file).toBe(true);
      }
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      expect(pkg).toMatchObject({ name: "@acme/antler-notes", type: "module", scripts: { test: "vitest run" } });
      const source = readFileSync(join(dir, "src/index.ts"), "utf8");
      expect(source).not.toMatch(/@langchain\//);
      expect(source).toContain(`${toolPrefix("@acme/antler-notes")}_greet`);

      // `npm test` in the new package: vitest, with no config of ours, resolving packages as Node does.
      const vitest = join(REPO, "node_modules/vitest/vitest.mjs");
      const run = await exec(process.execPath, [vitest, "run", "--reporter", "verbose"], {
        cwd: dir,
        env: { ...process.env, CI: "1", NO_COLOR: "1", FORCE_COLOR: "0" },
      }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: `${error.stdout}\n${error.stderr}`, failed: true }));
      expect(run.stdout).toContain("plugin conformance: @acme/antler-notes");
      expect(run.stdout).toMatch(/Tests\s+(\d+) passed \(\1\)/);
      expect(run).not.toHaveProperty("failed");

      const tsc = join(REPO, "node_modules/typescript/bin/tsc");
      const typecheck = await exec(process.execPath, [tsc, "-p", "tsconfig.json", "--noEmit"], { cwd: dir }).catch(
        (error: { stdout?: string }) => ({ stdout: String(error.stdout), failed: true }),
      );
      expect(typecheck).toEqual({ stdout: "", stderr: "" });

      // The built entry is light: importing it and running its setup through a kernel loads no LangChain module,
      // and the kernel lists the tool without building it.
      await exec(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir });
      writeFileSync(join(dir, "boot-probe.mjs"), BOOT_PROBE);
      const boot = await exec(process.execPath, ["boot-probe.mjs"], { cwd: dir });
      const loaded = boot.stderr.split("\n").filter((line) => line.startsWith("LOADED "));
      expect(loaded.some((line) => line.endsWith("/notes/dist/index.js"))).toBe(true);
      expect(loaded.filter((line) => line.includes("/node_modules/@langchain/"))).toEqual([]);
      expect(JSON.parse(boot.stdout)).toEqual([`${toolPrefix("@acme/antler-notes")}_greet`]);
    },
    180_000,
  );
});
