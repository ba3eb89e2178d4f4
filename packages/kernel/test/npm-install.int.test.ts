// A plugin author's project outside the workspace, installed the way npm users install: `pnpm pack` makes the
// tarballs of the kernel, the runtime, the cassette and SQLite plugins (the default preset), the OpenAI plugin
// and its @antler/model-kit; a fresh folder under os.tmpdir() installs them with npm (no workspace links) next
// to TypeScript and the peers npm adds itself. There a TypeScript plugin (a tool and a middleware) is
// type-checked against the published types, compiled, and loaded from config.yaml; one turn runs against an
// OpenAI-compatible server on loopback; and the project holds one copy of @langchain/core and of zod. The steps
// share one project.
//
// Kept fast and offline-friendly: npm reads its own cache first (--prefer-offline) and runs no install scripts.
// better-sqlite3's install script would download a prebuilt binary from GitHub (not reachable from CI) and
// then compile for minutes; instead the binding the workspace built from the same better-sqlite3 version is
// copied in, which is what the prebuilt download would have put there.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import {
  type ChatCompletionRequest,
  describeUnless,
  type OpenAICompatibleServer,
  startOpenAICompatibleServer,
} from "../src/testing/index.js";
import {
  installWorkspaceSqliteBinding,
  killRunning,
  packedInstallSkipReason,
  pnpmCommand,
  REPO_ROOT,
  runAsUser,
  transpilePlugin,
} from "./install-helpers.js";

/** The packages packed and installed, by folder: what a project that runs a turn on an OpenAI-compatible model needs. */
const PACKED = [
  "packages/kernel",
  "packages/plugins/runtime",
  "packages/plugins/cassette",
  "packages/plugins/storage-sqlite",
  "packages/plugins/openai",
  // Dependencies of the OpenAI and SQLite plugins; npm would otherwise look for them on the registry.
  "packages/model-kit",
  "packages/storage-kit",
];
const STEP_TIMEOUT_MS = 180_000;

const skipReason = () => packedInstallSkipReason(PACKED);

/** The directory of every installed copy of `name` in the project's node_modules tree, nested ones included. */
function installedCopies(projectDir: string, name: string): string[] {
  const copies: string[] = [];
  const visit = (modules: string): void => {
    if (!existsSync(modules)) return;
    const here = join(modules, name);
    if (existsSync(join(here, "package.json"))) copies.push(here.slice(projectDir.length + 1));
    for (const entry of readdirSync(modules, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
      const dirs = entry.name.startsWith("@")
        ? readdirSync(join(modules, entry.name)).map((n) => join(modules, entry.name, n))
        : [join(modules, entry.name)];
      for (const dir of dirs) visit(join(dir, "node_modules"));
    }
  };
  visit(join(projectDir, "node_modules"));
  return copies;
}

// The author's plugin: a tool and a middleware, typed against the published @antler/kernel and zod.
const PLUGIN_SOURCE = `import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { z } from "zod";

export default definePlugin({
  name: "acme-word-count",
  version: "1.0.0",
  kernel: "^0.1.0",
  configSchema: z.object({ words_per_minute: z.number().int().min(50).max(1000).default(230) }),
  setup(ctx) {
    const wordsPerMinute: number = ctx.config.words_per_minute;
    // @ts-expect-error ctx.config is typed from configSchema, so a number is not a string (fails if the types were any)
    const notAString: string = ctx.config.words_per_minute;
    void notAString;
    ctx.tools.add(
      defineTool({
        name: "word_count",
        description: "Count the words in a text and estimate the reading time.",
        schema: z.object({ text: z.string() }),
        run({ text }) {
          const words = text.trim() === "" ? 0 : text.trim().split(/\\s+/).length;
          return JSON.stringify({ words, reading_minutes: Math.ceil(words / wordsPerMinute) });
        },
      }),
      { group: "text" },
    );
    ctx.middleware.add(
      {
        name: "tag-results",
        async wrapToolCall(request, handler) {
          const result = await handler(request);
          if ("content" in result && typeof result.content === "string") result.content = \`[acme] \${result.content}\`;
          return result;
        },
      },
      { after: "ToolErrorHandling" },
    );
  },
});
`;

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    // What a consumer sets; the @ts-expect-error in the plugin still fails the check if the published types were any.
    skipLibCheck: true,
    types: ["node"],
  },
  include: ["src"],
};

const CONFIG_YAML = (baseUrl: string) => `base_dir: .antler
logging:
  level: warn
storage:
  backend: memory
models:
  - name: assistant
    provider: openai
    model: scripted-model
    api_key: not-a-real-key
    base_url: ${baseUrl}
    max_retries: 0
plugins:
  - package: "@antler/plugin-openai"
  - path: ./build/plugin.js
    config:
      words_per_minute: 200
`;

// One turn through the installed packages, as the project's own code would run it; prints what it saw.
const TURN_SOURCE = `import { AntlerClient } from "@antler/plugin-runtime";

const client = await AntlerClient.create({ configPath: "config.yaml" });
try {
  const plugins = client.kernel.plugins.map((p) => p.name);
  const answer = await client.chat("How many words are in 'one two three four'?", { threadId: "t1" });
  process.stdout.write(JSON.stringify({ plugins, answer }) + "\\n");
} finally {
  await client.close();
}
`;

describeUnless("a project outside the workspace that installs the packed packages with npm", await skipReason(), () => {
  const root = mkdtempSync(join(tmpdir(), "antler-npm-"));
  const packs = join(root, "packs");
  const projectDir = join(root, "project");
  const state: { tarballs: Record<string, string>; installed?: boolean; compiled?: boolean; server?: OpenAICompatibleServer } = {
    tarballs: {},
  };

  afterAll(async () => {
    killRunning();
    await state.server?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it(
    "packs each package with its dist, README and a manifest whose workspace links became versions",
    async () => {
      mkdirSync(packs);
      for (const dir of PACKED) {
        const [command, args] = pnpmCommand(["pack", "--pack-destination", packs]);
        const packed = await runAsUser(command, args, { cwd: join(REPO_ROOT, dir), timeoutMs: 60_000 });
        expect(packed.code, packed.output).toBe(0);
        const name = (JSON.parse(readFileSync(join(REPO_ROOT, dir, "package.json"), "utf8")) as { name: string }).name;
        const file = readdirSync(packs).find((f) => f.startsWith(`${name.replace("@", "").replace("/", "-")}-`));
        expect(file, `no tarball for ${name} in ${readdirSync(packs).join(", ")}`).toBeDefined();
        state.tarballs[name] = file as string;
      }
      const listing = await runAsUser("tar", ["-tzf", join(packs, state.tarballs["@antler/kernel"] as string)], {
        cwd: root,
        timeoutMs: 30_000,
      });
      expect(listing.output).toContain("package/dist/index.d.ts");
      expect(listing.output).toContain("package/bin/antler.js");
      expect(listing.output).toContain("package/README.md");
      expect(listing.output).not.toContain("package/src/");
      const manifest = await runAsUser(
        "tar",
        ["-xzOf", join(packs, state.tarballs["@antler/plugin-runtime"] as string), "package/package.json"],
        {
          cwd: root,
          timeoutMs: 30_000,
        },
      );
      expect(manifest.output).not.toContain("workspace:");
      expect(JSON.parse(manifest.output).peerDependencies).toMatchObject({ "@antler/kernel": "^0.1.0", zod: expect.any(String) });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "installs the tarballs, TypeScript and the peers with npm, without workspace links",
    async () => {
      expect(Object.keys(state.tarballs), "the pack step failed").toHaveLength(PACKED.length);
      mkdirSync(projectDir);
      // TypeScript and Node's types at the versions the workspace pins, so the check matches the workspace's.
      const pinned = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { devDependencies: Record<string, string> })
        .devDependencies;
      const manifest = {
        name: "acme-word-count",
        private: true,
        type: "module",
        dependencies: Object.fromEntries(Object.entries(state.tarballs).map(([name, file]) => [name, `file:../packs/${file}`])),
        devDependencies: { typescript: pinned.typescript, "@types/node": pinned["@types/node"] },
      };
      writeFileSync(join(projectDir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
      const install = await runAsUser(
        "npm",
        ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
        {
          cwd: projectDir,
          timeoutMs: STEP_TIMEOUT_MS - 20_000,
        },
      );
      expect(install.code, install.output).toBe(0);
      // Real folders, not links back into the workspace.
      const kernelDir = join(projectDir, "node_modules/@antler/kernel");
      expect(existsSync(join(kernelDir, "dist/index.js"))).toBe(true);
      expect(existsSync(join(kernelDir, "src")), "the installed kernel is the packed one (no src/)").toBe(false);

      // The stand-in for better-sqlite3's prebuilt binary (see the top of this file).
      installWorkspaceSqliteBinding(projectDir);
      state.installed = true;
    },
    STEP_TIMEOUT_MS,
  );

  it("holds one copy of @langchain/core, of zod and of @antler/kernel, shared by every package", () => {
    expect(state.installed, "the install step failed").toBe(true);
    for (const name of ["@langchain/core", "zod", "@antler/kernel", "@langchain/langgraph", "langchain"]) {
      expect(installedCopies(projectDir, name), `copies of ${name}`).toEqual([`node_modules/${name}`]);
    }
  });

  it(
    "type-checks a TypeScript plugin (a tool and a middleware) against the published types with tsc --noEmit",
    async () => {
      expect(state.installed, "the install step failed").toBe(true);
      mkdirSync(join(projectDir, "src"));
      writeFileSync(join(projectDir, "src/plugin.ts"), PLUGIN_SOURCE);
      writeFileSync(join(projectDir, "tsconfig.json"), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
      const tsc = join(projectDir, "node_modules/typescript/bin/tsc");
      const check = await runAsUser(process.execPath, [tsc, "--noEmit", "-p", "tsconfig.json"], { cwd: projectDir, timeoutMs: 120_000 });
      expect(check.code, check.output).toBe(0);

      // The same check fails on a plugin that misuses the API, so the pass above is not vacuous.
      writeFileSync(
        join(projectDir, "src/broken.ts"),
        `import { definePlugin } from "@antler/kernel";\nexport default definePlugin({ name: 1, setup() {} });\n`,
      );
      const broken = await runAsUser(process.execPath, [tsc, "--noEmit", "-p", "tsconfig.json"], { cwd: projectDir, timeoutMs: 120_000 });
      rmSync(join(projectDir, "src/broken.ts"));
      expect(broken.code).not.toBe(0);
      expect(broken.output).toMatch(/src\/broken\.ts\(2,\d+\): error TS\d+/);
      expect(broken.output).not.toContain("src/plugin.ts");

      // Node 20 runs JavaScript: strip the types (the check above already passed) with the project's TypeScript.
      const transpile = await transpilePlugin(projectDir);
      expect(transpile.code, transpile.output).toBe(0);
      state.compiled = true;
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "boots a kernel with the OpenAI plugin and the compiled plugin and runs one turn that calls the plugin's tool",
    async () => {
      expect(state.compiled, "the type-check step failed").toBe(true);
      // The agent's model: call the plugin's tool, then answer from its result. Other calls (the thread title) get a line.
      const toolNames = (body: ChatCompletionRequest) => (body.tools ?? []).map((t) => (t as { function: { name: string } }).function.name);
      state.server = await startOpenAICompatibleServer({
        handler(body) {
          if (!toolNames(body).includes("word_count")) return { text: "Counting words" };
          if (body.messages.some((m) => m.role === "tool")) return { text: "There are 4 words." };
          return { toolCalls: [{ name: "word_count", args: { text: "one two three four" } }] };
        },
      });
      writeFileSync(join(projectDir, "config.yaml"), CONFIG_YAML(state.server.url));
      writeFileSync(join(projectDir, "turn.mjs"), TURN_SOURCE);
      const turn = await runAsUser(process.execPath, ["turn.mjs"], { cwd: projectDir, timeoutMs: 120_000 });
      expect(turn.code, turn.output).toBe(0);
      const printed = JSON.parse(turn.output.trim().split("\n").at(-1) as string) as { plugins: string[]; answer: string };
      expect(printed.plugins).toEqual(expect.arrayContaining(["@antler/plugin-openai", "acme-word-count", "@antler/plugin-runtime"]));
      expect(printed.answer).toBe("There are 4 words.");

      const agentCalls = state.server.requests
        .filter((r) => r.path.endsWith("/chat/completions"))
        .map((r) => r.body as ChatCompletionRequest)
        .filter((body) => toolNames(body).includes("word_count"));
      expect(agentCalls).toHaveLength(2);
      // The tool ran with the configured words_per_minute, and the plugin's middleware tagged its result.
      const toolMessage = agentCalls[1]?.messages.find((m) => m.role === "tool");
      expect(toolMessage?.content).toBe('[acme] {"words":4,"reading_minutes":1}');
    },
    STEP_TIMEOUT_MS,
  );
});
