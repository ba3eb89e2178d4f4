// create-antler's command line: what it accepts, what it refuses (exit 2, nothing written) and the defaults it takes.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { CREATE_USAGE, type CreateOptions, parseCreateArgs, TARBALLS_ENV } from "../src/args.js";
import { main } from "../src/cli.js";
import { findTarballs } from "../src/tarballs.js";
import { ANTLER_PACKAGES, templateVersions } from "../src/versions.js";

const made: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "create-antler-args-"));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const cwd = "/home/ada/projects";
const parse = (argv: string[], env: Record<string, string> = {}) => parseCreateArgs(argv, { cwd, env });
const created = (argv: string[], env: Record<string, string> = {}): CreateOptions => {
  const parsed = parse(argv, env);
  if (parsed.kind !== "create") throw new Error(`expected options, got ${JSON.stringify(parsed)}`);
  return parsed.options;
};
const errorOf = (argv: string[]) => {
  const parsed = parse(argv);
  if (parsed.kind !== "error") throw new Error(`expected an error, got ${JSON.stringify(parsed)}`);
  return parsed.message;
};

/** Runs the CLI in-process; the install step is recorded, never run. */
async function runMain(argv: string[], options: { cwd: string; env?: Record<string, string> }) {
  let out = "";
  let err = "";
  const sink = (append: (s: string) => void) =>
    new Writable({
      write(chunk, _enc, done) {
        append(String(chunk));
        done();
      },
    });
  const installs: CreateOptions[] = [];
  const code = await main(argv, {
    cwd: options.cwd,
    env: options.env ?? {},
    stdout: sink((s) => {
      out += s;
    }),
    stderr: sink((s) => {
      err += s;
    }),
    install: async (o) => {
      installs.push(o);
      return 0;
    },
  });
  return { code, out, err, installs };
}

describe("create-antler arguments", () => {
  it("takes the folder, names the package after it, installs, and uses npm by default", () => {
    expect(created(["my-app"])).toEqual({ dir: "/home/ada/projects/my-app", name: "my-app", install: true, packageManager: "npm" });
  });

  it("reads --name, --no-install, --package-manager and --from-tarballs (relative to the working folder)", () => {
    expect(
      created(["apps/bot", "--name", "@acme/bot", "--no-install", "--package-manager", "pnpm", "--from-tarballs", "../packs"]),
    ).toEqual({
      dir: "/home/ada/projects/apps/bot",
      name: "@acme/bot",
      install: false,
      packageManager: "pnpm",
      fromTarballs: "/home/ada/packs",
    });
  });

  it("defaults to the package manager that invoked it (npm_config_user_agent)", () => {
    expect(created(["a"], { npm_config_user_agent: "pnpm/10.34.9 npm/? node/v20.20.0 linux x64" }).packageManager).toBe("pnpm");
    expect(created(["a"], { npm_config_user_agent: "npm/10.8.2 node/v20.20.0 linux x64 workspaces/false" }).packageManager).toBe("npm");
    expect(created(["a"], { npm_config_user_agent: "yarn/4.0.0 npm/? node/v20.20.0" }).packageManager).toBe("npm");
    expect(created(["a", "--package-manager", "npm"], { npm_config_user_agent: "pnpm/10.34.9" }).packageManager).toBe("npm");
  });

  it(`reads the tarball folder from $${TARBALLS_ENV}, and --from-tarballs wins over it`, () => {
    expect(created(["a"], { [TARBALLS_ENV]: "/srv/packs" }).fromTarballs).toBe("/srv/packs");
    expect(created(["a", "--from-tarballs", "/opt/packs"], { [TARBALLS_ENV]: "/srv/packs" }).fromTarballs).toBe("/opt/packs");
    expect(created(["a"], { [TARBALLS_ENV]: "" })).not.toHaveProperty("fromTarballs");
  });

  it("answers --help and -h with the usage", () => {
    expect(parse(["--help"])).toEqual({ kind: "help" });
    expect(parse(["my-app", "-h"])).toEqual({ kind: "help" });
  });

  it("refuses a missing folder, two folders and an empty one, with an example", () => {
    expect(errorOf([])).toContain("give the folder to create the project in, e.g. npm create antler my-app");
    expect(errorOf([])).toContain(CREATE_USAGE);
    expect(errorOf(["a", "b"])).toContain('give one folder, not 2 ("a", "b"); quote a path that has spaces');
    expect(errorOf([" "])).toContain("the folder name is empty");
  });

  it("refuses unknown options and options without their value, naming them", () => {
    expect(errorOf(["my-app", "--typescript"])).toMatch(/Unknown option '--typescript'.*\nUsage: /s);
    expect(errorOf(["my-app", "--name"])).toMatch(/--name <value>' argument missing/);
    expect(errorOf(["my-app", "--from-tarballs", ""])).toContain("--from-tarballs needs a folder");
  });

  it("refuses a package manager other than npm or pnpm", () => {
    expect(errorOf(["my-app", "--package-manager", "yarn"])).toBe('--package-manager must be npm or pnpm, not "yarn".');
  });

  it("refuses a folder or --name that is not an npm package name, suggesting one", () => {
    expect(errorOf(["My App"])).toBe(
      "the folder name \"My App\" is not a valid npm package name (a package name is lowercase letters, digits, '-', '.', '_' and '~', optionally under an @scope/, with no spaces); pass one with --name, e.g. --name my-app",
    );
    expect(errorOf(["ok", "--name", "Bad Name!"])).toMatch(
      /^--name "Bad Name!" is not a valid npm package name .*; e\.g\. --name bad-name$/,
    );
    expect(errorOf(["ok", "--name", "node_modules"])).toContain("npm reserves that name");
    expect(created(["My App", "--name", "my-app"]).dir).toBe("/home/ada/projects/My App");
  });
});

describe("create-antler on bad input (exit 2, nothing written)", () => {
  it("prints the error on stderr with exit 2 and writes nothing", async () => {
    const dir = tempDir();
    const { code, err, out } = await runMain(["Bad Name", "--no-install"], { cwd: dir });
    expect(code).toBe(2);
    expect(err).toMatch(/^create-antler: the folder name "Bad Name" is not a valid npm package name/);
    expect(out).toBe("");
    expect(readdirSync(dir)).toEqual([]);
  });

  it("refuses a folder that is not empty, naming what is in it, and leaves it as it was", async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, "my-app"));
    writeFileSync(join(cwd, "my-app", "notes.txt"), "mine");
    const { code, err, installs } = await runMain(["my-app"], { cwd });
    expect(code).toBe(2);
    expect(err).toBe(
      `create-antler: ${join(cwd, "my-app")} is not empty (notes.txt); nothing was written. Pick a new folder, or empty this one first.\n`,
    );
    expect(readdirSync(join(cwd, "my-app"))).toEqual(["notes.txt"]);
    expect(installs).toEqual([]);
  });

  it("refuses a path that is a file", async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, "app"), "");
    const { code, err } = await runMain(["app"], { cwd });
    expect(code).toBe(2);
    expect(err).toContain("exists and is a file; pick a new folder name");
  });

  it("refuses a tarball folder that is missing or lacks a package the project needs, naming the file it expected", async () => {
    const cwd = tempDir();
    const missing = await runMain(["a", "--from-tarballs", "no-such-dir"], { cwd });
    expect(missing.code).toBe(2);
    expect(missing.err).toContain(`--from-tarballs: ${join(cwd, "no-such-dir")} is not a folder`);

    const packs = join(cwd, "packs");
    mkdirSync(packs);
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, "../../kernel/package.json"), "utf8"));
    writeFileSync(join(packs, `antler-kernel-${version}.tgz`), "");
    const partial = await runMain(["b", "--from-tarballs", packs], { cwd });
    expect(partial.code).toBe(2);
    expect(partial.err).toContain(
      `has no single tarball for @antler/plugin-runtime, @antler/plugin-cassette, @antler/plugin-storage-sqlite`,
    );
    expect(partial.err).toContain(`antler-plugin-runtime-${version}.tgz`);
    expect(existsSync(join(cwd, "a")) || existsSync(join(cwd, "b"))).toBe(false);
  });
});

describe("create-antler's versions and tarballs", () => {
  it("pins the workspace's @antler/* versions and the zod and vitest the workspace tests with", () => {
    const versions = templateVersions();
    for (const name of ANTLER_PACKAGES) {
      const dir = name === "@antler/kernel" ? "kernel" : `plugins/${name.replace("@antler/plugin-", "")}`;
      expect(versions[name], name).toBe(JSON.parse(readFileSync(join(import.meta.dirname, `../../${dir}/package.json`), "utf8")).version);
    }
    const root = JSON.parse(readFileSync(join(import.meta.dirname, "../../../package.json"), "utf8"));
    expect(versions.vitest).toBe(root.devDependencies.vitest);
    const kernel = JSON.parse(readFileSync(join(import.meta.dirname, "../../kernel/package.json"), "utf8"));
    expect(versions.zod).toBe(kernel.devDependencies.zod);
  });

  it("takes the needed tarballs as direct file: specs and every other @antler one as an override, preferring the pinned version", () => {
    const packs = tempDir();
    for (const file of [
      "antler-kernel-0.1.0.tgz",
      "antler-kernel-0.0.9.tgz",
      "antler-plugin-runtime-0.1.0.tgz",
      "antler-model-kit-0.1.0.tgz",
      "create-antler-0.1.0.tgz",
      "notes.txt",
    ]) {
      writeFileSync(join(packs, file), "");
    }
    expect(findTarballs(packs, ["@antler/kernel", "@antler/plugin-runtime"], { "@antler/kernel": "0.1.0" })).toEqual({
      direct: {
        "@antler/kernel": `file:${join(packs, "antler-kernel-0.1.0.tgz")}`,
        "@antler/plugin-runtime": `file:${join(packs, "antler-plugin-runtime-0.1.0.tgz")}`,
      },
      overrides: { "@antler/model-kit": `file:${join(packs, "antler-model-kit-0.1.0.tgz")}` },
    });
  });
});
