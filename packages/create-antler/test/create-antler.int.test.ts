// `npm create antler` as a user runs it, outside the workspace: create-antler and the packages a generated project
// needs are packed with `pnpm pack` (once, for every step of this file); the packed create-antler runs through
// `npm exec` (what `npm create antler` does) with --from-tarballs into a folder under os.tmpdir(); npm installs the
// project; its own `npm test` (vitest: the plugin conformance suite and real turns on the scripted model) passes,
// and `npm start` runs one offline turn in which the custom agent calls the local plugin's tool.
//
// Kept offline-friendly the way packages/kernel/test/npm-install.int.test.ts is: npm reads its cache first
// (--prefer-offline) and runs no install scripts; better-sqlite3's binding is the one the workspace built.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeUnless } from "@antler/kernel/testing";
import { afterAll, expect, it } from "vitest";
import {
  installWorkspaceSqliteBinding,
  killRunning,
  packedInstallSkipReason,
  packWorkspacePackages,
  REPO_ROOT,
  runAsUser,
} from "../../kernel/test/install-helpers.js";
import { AGENT_NAME, TOOL_NAME } from "../src/template.js";

/** create-antler, and what a generated project installs: the preset's packages and the libraries they depend on. */
const PACKED = [
  "packages/create-antler",
  "packages/kernel",
  "packages/plugins/runtime",
  "packages/plugins/cassette",
  "packages/plugins/storage-sqlite",
  "packages/model-kit",
  "packages/storage-kit",
];
const STEP_TIMEOUT_MS = 240_000;

const skipReason = () => packedInstallSkipReason(PACKED);

describeUnless("npm create antler, from packed tarballs, outside the workspace", await skipReason(), () => {
  const root = mkdtempSync(join(tmpdir(), "create-antler-"));
  const packs = join(root, "packs");
  const projectDir = join(root, "my-app");
  const state: { tarballs: Record<string, string>; created?: boolean; installed?: boolean } = { tarballs: {} };
  /** `npm exec` of the packed create-antler, as `npm create antler <args>` runs it. */
  const createAntler = (args: readonly string[]) =>
    runAsUser(
      "npm",
      [
        "exec",
        "--yes",
        "--prefer-offline",
        "--package",
        join(packs, state.tarballs["create-antler"] as string),
        "--",
        "create-antler",
        ...args,
      ],
      {
        cwd: root,
        timeoutMs: 120_000,
      },
    );

  afterAll(() => {
    killRunning();
    rmSync(root, { recursive: true, force: true });
  });

  it(
    "packs create-antler with its bin, dist and README, its @antler/* versions written out",
    async () => {
      mkdirSync(packs);
      state.tarballs = await packWorkspacePackages(PACKED, packs);
      const tarball = join(packs, state.tarballs["create-antler"] as string);
      const listing = await runAsUser("tar", ["-tzf", tarball], { cwd: root, timeoutMs: 30_000 });
      for (const file of ["package/bin/create-antler.js", "package/dist/cli.js", "package/dist/index.d.ts", "package/README.md"]) {
        expect(listing.output).toContain(file);
      }
      expect(listing.output).not.toContain("package/src/");
      const manifest = await runAsUser("tar", ["-xzOf", tarball, "package/package.json"], { cwd: root, timeoutMs: 30_000 });
      expect(manifest.output).not.toContain("workspace:");
      const kernelVersion = JSON.parse(readFileSync(join(REPO_ROOT, "packages/kernel/package.json"), "utf8")).version;
      expect(JSON.parse(manifest.output).devDependencies["@antler/kernel"]).toBe(kernelVersion);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "writes the project with file: specs to the tarballs, and then refuses the same folder (exit 2)",
    async () => {
      expect(state.tarballs["create-antler"], "the pack step failed").toBeDefined();
      const created = await createAntler(["my-app", "--from-tarballs", packs, "--no-install"]);
      expect(created.code, created.output).toBe(0);
      expect(created.output).toContain(`Created my-app in ${projectDir}`);
      expect(created.output).toMatch(/Next:\n {2}cd my-app\n {2}npm install\n {2}npm start/);
      const pkg = JSON.parse(readFileSync(join(projectDir, "package.json"), "utf8"));
      expect(pkg.dependencies["@antler/kernel"]).toBe(`file:${join(packs, state.tarballs["@antler/kernel"] as string)}`);
      expect(pkg.overrides["@antler/model-kit"]).toBe(`file:${join(packs, state.tarballs["@antler/model-kit"] as string)}`);
      for (const file of ["config.yaml", `agents/${AGENT_NAME}/SOUL.md`, "plugins/units/index.js", "test/agent.test.js", "README.md"]) {
        expect(existsSync(join(projectDir, file)), file).toBe(true);
      }
      state.created = true;

      const again = await createAntler(["my-app", "--from-tarballs", packs, "--no-install"]);
      expect(again.code).toBe(2);
      expect(again.output).toContain(`create-antler: ${projectDir} is not empty`);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "installs with npm, without links into the workspace",
    async () => {
      expect(state.created, "the create step failed").toBe(true);
      const install = await runAsUser(
        "npm",
        ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
        {
          cwd: projectDir,
          timeoutMs: STEP_TIMEOUT_MS - 20_000,
        },
      );
      expect(install.code, install.output).toBe(0);
      expect(existsSync(join(projectDir, "node_modules/@antler/kernel/src")), "the installed kernel is the packed one").toBe(false);
      expect(existsSync(join(projectDir, "node_modules/@antler/storage-kit/dist/index.js")), "a dependency from the overrides").toBe(true);
      installWorkspaceSqliteBinding(projectDir);
      state.installed = true;
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "passes its own npm test: the plugin conformance suite and real turns with the agent on the scripted model",
    async () => {
      expect(state.installed, "the install step failed").toBe(true);
      // The verbose reporter names each suite, so the conformance suite is seen to run.
      const test = await runAsUser("npm", ["test", "--", "--reporter=verbose"], { cwd: projectDir, timeoutMs: STEP_TIMEOUT_MS });
      expect(test.code, test.output).toBe(0);
      expect(test.output).toContain("plugin conformance: units");
      expect(test.output).toMatch(/Tests\s+(\d+) passed \(\1\)/);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "runs one offline turn with npm start, in which the agent calls the plugin's tool, and its config checks clean",
    async () => {
      expect(state.installed, "the install step failed").toBe(true);
      const start = await runAsUser("npm", ["start"], { cwd: projectDir, timeoutMs: 120_000 });
      expect(start.code, start.output).toBe(0);
      expect(start.output).toContain(`✓ ${TOOL_NAME}({"value":21,"from":"c","to":"f"})`);
      expect(start.output).toContain("21 c = 69.8 f.");
      expect(start.output).toMatch(/thread [0-9a-f-]{36} · trace [0-9a-f]+/);

      const check = await runAsUser("npm", ["run", "check"], { cwd: projectDir, timeoutMs: 120_000 });
      expect(check.code, check.output).toBe(0);
      expect(check.output).toContain(`${join(projectDir, "config.yaml")} is valid: 2 plugin(s)`);
    },
    STEP_TIMEOUT_MS,
  );
});
