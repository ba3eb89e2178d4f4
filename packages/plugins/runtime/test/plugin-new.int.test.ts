// `antler plugin new`: the scaffolder writes a plugin package whose own test (conformance kit + a scripted turn)
// passes as generated, run by vitest in a child process exactly as `npm test` would run it there.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { runCli } from "@antler/kernel/testing";
import { afterAll, describe, expect, it } from "vitest";
import { antlerRangeFor, invalidPluginName } from "../src/cli/plugin-new.js";
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

  it("pins the versions this repository uses", () => {
    const root = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
    const kernel = JSON.parse(readFileSync(join(REPO, "packages/kernel/package.json"), "utf8"));
    expect(TEMPLATE_VERSIONS).toEqual({
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
    },
    180_000,
  );
});
