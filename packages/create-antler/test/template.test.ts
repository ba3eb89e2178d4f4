// What create-antler writes: the files of the project and the package.json it gets for each package manager and
// with or without a folder of tarballs. (The int test installs such a project and runs its start and test scripts.)
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../src/cli.js";
import { renderProject } from "../src/create.js";
import { AGENT_NAME, START_PROMPT, TOOL_NAME } from "../src/template.js";
import { templateVersions } from "../src/versions.js";

const made: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "create-antler-template-"));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const versions = templateVersions();
const manifestOf = (files: Record<string, string>) => JSON.parse(files["package.json"] as string);

function collect() {
  let text = "";
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

describe("the generated project", () => {
  it("has a config, a custom agent, a local plugin, the offline model, tests, a README and a package.json", () => {
    const files = renderProject({ name: "my-app", packageManager: "npm" });
    expect(Object.keys(files).sort()).toEqual(
      [
        ".gitignore",
        "README.md",
        `agents/${AGENT_NAME}/SOUL.md`,
        `agents/${AGENT_NAME}/config.yaml`,
        "config.yaml",
        "package.json",
        "plugins/offline-model.js",
        "plugins/units/index.js",
        "plugins/units/tool.js",
        "test/agent.test.js",
        "test/units.test.js",
        "vitest.config.js",
      ].sort(),
    );
    expect(files["config.yaml"]).toMatch(/^# my-app: an Antler distribution/);
    expect(files["README.md"]).toMatch(/^# my-app\n/);
  });

  it("keeps the plugin's entry light: LangChain's tool classes load only from the tool's module, through @antler/kernel/authoring", () => {
    const files = renderProject({ name: "my-app", packageManager: "npm" });
    expect(files["plugins/units/index.js"]).not.toMatch(/from "@antler\/kernel\/authoring"/);
    expect(files["plugins/units/index.js"]).toContain(`{ name: "${TOOL_NAME}", group: "units" }`);
    expect(files["plugins/units/tool.js"]).toContain('import { defineTool } from "@antler/kernel/authoring";');
    expect(files["plugins/units/index.js"]).toContain(`kernel: "^${versions["@antler/kernel"]}",`);
    for (const file of Object.values(files)) expect(file).not.toMatch(/from "@langchain\//);
  });

  it("depends on the workspace's @antler/* versions, zod and vitest, with start, test and check scripts", () => {
    const pkg = manifestOf(renderProject({ name: "@acme/bot", packageManager: "npm" }));
    expect(pkg).toMatchObject({
      name: "@acme/bot",
      private: true,
      type: "module",
      scripts: { start: `antler run --agent ${AGENT_NAME} "${START_PROMPT}"`, test: "vitest run", check: "antler config check" },
      dependencies: {
        "@antler/kernel": `^${versions["@antler/kernel"]}`,
        "@antler/plugin-runtime": `^${versions["@antler/plugin-runtime"]}`,
        "@antler/plugin-cassette": `^${versions["@antler/plugin-cassette"]}`,
        "@antler/plugin-storage-sqlite": `^${versions["@antler/plugin-storage-sqlite"]}`,
        zod: `^${versions.zod}`,
      },
      devDependencies: { vitest: versions.vitest },
    });
    expect(pkg).not.toHaveProperty("overrides");
    expect(pkg).not.toHaveProperty("pnpm");
  });

  it("lets pnpm build better-sqlite3 and says pnpm in the README when pnpm is the package manager", () => {
    const files = renderProject({ name: "my-app", packageManager: "pnpm" });
    expect(manifestOf(files).pnpm).toEqual({ onlyBuiltDependencies: ["better-sqlite3"] });
    expect(files["README.md"]).toContain("pnpm start");
    expect(files["README.md"]).not.toMatch(/(^|[^p])npm start/m);
  });

  it("points @antler/* at the tarballs with file: specs, and the other @antler tarballs at overrides (npm) or every tarball in pnpm.overrides", () => {
    const packs = tempDir();
    const v = versions["@antler/kernel"];
    for (const name of ["kernel", "plugin-runtime", "plugin-cassette", "plugin-storage-sqlite", "model-kit", "storage-kit"]) {
      writeFileSync(join(packs, `antler-${name}-${v}.tgz`), "");
    }
    const npm = manifestOf(renderProject({ name: "my-app", packageManager: "npm", fromTarballs: packs }));
    expect(npm.dependencies["@antler/plugin-runtime"]).toBe(`file:${join(packs, `antler-plugin-runtime-${v}.tgz`)}`);
    expect(npm.dependencies.zod).toBe(`^${versions.zod}`);
    expect(npm.overrides).toEqual({
      "@antler/model-kit": `file:${join(packs, `antler-model-kit-${v}.tgz`)}`,
      "@antler/storage-kit": `file:${join(packs, `antler-storage-kit-${v}.tgz`)}`,
    });
    const pnpm = manifestOf(renderProject({ name: "my-app", packageManager: "pnpm", fromTarballs: packs }));
    expect(pnpm).not.toHaveProperty("overrides");
    // pnpm would fetch the runtime's own @antler/* dependencies from the registry: every tarball is an override there.
    expect(pnpm.pnpm.overrides).toEqual({
      ...npm.overrides,
      ...Object.fromEntries(Object.entries(npm.dependencies).filter(([n]) => n.startsWith("@antler/"))),
    });
  });
});

describe("create-antler writing a project", () => {
  it("writes the files into a new folder and prints the next steps without install when --no-install is given", async () => {
    const cwd = tempDir();
    const out = collect();
    const err = collect();
    const code = await main(["apps/my-app", "--no-install", "--package-manager", "pnpm"], {
      cwd,
      env: {},
      stdout: out.stream,
      stderr: err.stream,
    });
    expect(err.text()).toBe("");
    expect(code).toBe(0);
    const dir = join(cwd, "apps/my-app");
    expect(readdirSync(dir).sort()).toEqual([
      ".gitignore",
      "README.md",
      "agents",
      "config.yaml",
      "package.json",
      "plugins",
      "test",
      "vitest.config.js",
    ]);
    expect(out.text()).toContain(`Created my-app in ${dir}`);
    expect(out.text()).toMatch(/Next:\n {2}cd apps\/my-app\n {2}pnpm install\n {2}pnpm start {5}# one offline turn/);
  });

  it("runs the install in the new folder, and on failure says the files are written and how to retry (exit 1)", async () => {
    const cwd = tempDir();
    const ran: string[] = [];
    const err = collect();
    const code = await main(["my-app"], {
      cwd,
      env: { npm_config_user_agent: "npm/10.8.2 node/v20.20.0" },
      stdout: collect().stream,
      stderr: err.stream,
      install: async (options) => {
        ran.push(`${options.packageManager} in ${options.dir}`);
        return 1;
      },
    });
    expect(ran).toEqual([`npm in ${join(cwd, "my-app")}`]);
    expect(code).toBe(1);
    expect(err.text()).toContain(
      "npm install failed (exit 1); the files are written. Fix the cause above, then run: cd my-app && npm install",
    );
    expect(readFileSync(join(cwd, "my-app/config.yaml"), "utf8")).toContain("provider: scripted");
  });

  it("writes into an empty folder that exists", async () => {
    const cwd = tempDir();
    const code = await main([".", "--name", "here", "--no-install"], { cwd, env: {}, stdout: collect().stream, stderr: collect().stream });
    expect(code).toBe(0);
    expect(JSON.parse(readFileSync(join(cwd, "package.json"), "utf8")).name).toBe("here");
  });
});
