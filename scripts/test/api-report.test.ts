import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../api-report.mjs";

// The script behind `pnpm api:check` / `pnpm api:update`, run in-process (one TypeScript load) against a small
// workspace made here; one test runs it as a child process to pin the exit code CI sees.
const script = join(dirname(fileURLToPath(import.meta.url)), "..", "api-report.mjs");

let root: string;
const pkgDir = () => join(root, "packages", "plugins", "demo");

function writeDeclarations(index: string, options = "export interface GreetOptions {\n  loud: Loudness;\n}\ntype Loudness = 1 | 2;\n") {
  mkdirSync(join(pkgDir(), "dist"), { recursive: true });
  writeFileSync(join(pkgDir(), "dist", "index.d.ts"), index);
  writeFileSync(join(pkgDir(), "dist", "options.d.ts"), options);
}

function run(mode: string) {
  const lines: string[] = [];
  const status = runCli([mode, "--root", root], { out: (l) => lines.push(l), err: (l) => lines.push(l) });
  return { status, out: lines.join("\n") };
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "antler-api-report-"));
  mkdirSync(pkgDir(), { recursive: true });
  writeFileSync(
    join(pkgDir(), "package.json"),
    JSON.stringify({
      name: "@fixture/demo",
      version: "1.0.0",
      type: "module",
      exports: { ".": { types: "./dist/index.d.ts", default: "./dist/index.js" }, "./package.json": "./package.json" },
    }),
  );
  // A private package has no report.
  mkdirSync(join(root, "packages", "private-one", "dist"), { recursive: true });
  writeFileSync(join(root, "packages", "private-one", "package.json"), JSON.stringify({ name: "private-one", private: true }));
  writeDeclarations(
    'import type { GreetOptions } from "./options.js";\nexport declare function greet(name: string, options?: GreetOptions): string;\nexport type { GreetOptions };\n',
  );
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe("api-report", () => {
  it("writes a report holding each export's declaration and the unexported types they reach", () => {
    expect(run("update").status).toBe(0);
    const report = readFileSync(join(pkgDir(), "api-report.md"), "utf8");
    expect(report).toContain("## `@fixture/demo`");
    expect(report).toContain("function greet(name: string, options?: GreetOptions): string;");
    expect(report).toContain("type Loudness = 1 | 2;");
    expect(run("check")).toMatchObject({ status: 0 });
  });

  it("fails the check when an export's signature changes, and says to run api:update and add a changeset", () => {
    run("update");
    writeDeclarations(
      'import type { GreetOptions } from "./options.js";\nexport declare function greet(name: string, options: GreetOptions): string;\nexport type { GreetOptions };\n',
    );
    const { status, out } = run("check");
    expect(status).toBe(1);
    expect(out).toContain("@fixture/demo: API differs from packages/plugins/demo/api-report.md");
    expect(out).toContain("+ function greet(name: string, options: GreetOptions): string;");
    expect(out).toContain("pnpm api:update");
    expect(out).toContain("changeset");
  });

  it("exits non-zero from the command line when the API differs", () => {
    run("update");
    writeDeclarations('import type { GreetOptions } from "./options.js";\nexport type { GreetOptions };\n');
    const res = spawnSync(process.execPath, [script, "check", "--root", root], { encoding: "utf8" });
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("pnpm api:update");
  }, 60_000);

  it("fails the check when an export is removed", () => {
    run("update");
    writeDeclarations('import type { GreetOptions } from "./options.js";\nexport type { GreetOptions };\n');
    const { status, out } = run("check");
    expect(status).toBe(1);
    expect(out).toContain("- function greet(name: string, options?: GreetOptions): string;");
  });

  it("fails the check when a type the exports reach changes though it is not exported itself", () => {
    run("update");
    writeDeclarations(
      'import type { GreetOptions } from "./options.js";\nexport declare function greet(name: string, options?: GreetOptions): string;\nexport type { GreetOptions };\n',
      "export interface GreetOptions {\n  loud: Loudness;\n}\ntype Loudness = 1 | 2 | 3;\n",
    );
    const { status, out } = run("check");
    expect(status).toBe(1);
    expect(out).toContain("+ type Loudness = 1 | 2 | 3;");
  });

  it("ignores a change of comments or layout in the declarations", () => {
    run("update");
    writeDeclarations(
      'import type { GreetOptions } from "./options.js";\n/** Says hello. */\nexport declare function greet(\n  name: string,\n  options?: GreetOptions,\n): string;\nexport type { GreetOptions };\n',
    );
    expect(run("check")).toMatchObject({ status: 0 });
  });

  it("fails with the missing report named when a package has none", () => {
    const { status, out } = run("check");
    expect(status).toBe(1);
    expect(out).toContain("@fixture/demo: no API report (packages/plugins/demo/api-report.md)");
  });

  it("says to build first when an entry point's declarations are missing", () => {
    rmSync(join(pkgDir(), "dist"), { recursive: true });
    const { status, out } = run("check");
    expect(status).toBe(1);
    expect(out).toContain("declarations missing (run `pnpm build` first)");
    expect(out).toContain('@fixture/demo ".": packages/plugins/demo/dist/index.d.ts');
  });
});
