import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/authoring.js";
import { type AntlerError, type AntlerPlugin, type CliOptionSpec, createKernel, definePlugin } from "../src/index.js";
import { tempDir, writeFiles } from "./fixtures.js";

const plugin = (name: string, extra: Partial<AntlerPlugin> = {}): AntlerPlugin =>
  definePlugin({ name, version: "1.0.0", kernel: "^0.1.0", setup() {}, ...extra } as Parameters<typeof definePlugin>[0]) as AntlerPlugin;

async function failure(promise: Promise<unknown>): Promise<AntlerError> {
  return promise.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: unknown) => e as AntlerError,
  );
}

// A complete third-party plugin as a plain .js file with no imports of its own: it receives the kernel's
// authoring API (definePlugin, defineTool, z) because it default-exports a function.
const WORD_COUNT_PLUGIN = `
export default ({ definePlugin, defineTool, z }) =>
  definePlugin({
    name: "acme-word-count",
    version: "1.2.0",
    kernel: "^0.1.0",
    configSchema: z.object({ label: z.string().default("words"), max_words: z.number().int().positive() }),
    setup(ctx) {
      ctx.tools.add(
        defineTool({
          name: "word_count",
          description: "Counts the words in a text.",
          schema: z.object({ text: z.string() }),
          run: ({ text }) => {
            const n = text.trim().split(/\\s+/).filter(Boolean).length;
            return n > ctx.config.max_words ? "too long" : ctx.config.label + ": " + n;
          },
        }),
        { group: "text" },
      );
    },
  });
`;

describe("loading plugins from config.yaml", () => {
  it("loads a plain .js plugin from outside the repository by path; it gets its validated config and its tool is available", async () => {
    const dir = tempDir("antler-thirdparty-");
    writeFiles(dir, {
      "plugins/word-count.js": WORD_COUNT_PLUGIN,
      "package.json": '{"type":"module"}',
      "config.yaml": "plugins:\n  - path: ./plugins/word-count.js\n    config:\n      max_words: 50\n",
    });
    const kernel = await createKernel({ configPath: join(dir, "config.yaml"), env: {}, builtins: false });
    expect(kernel.plugins.map((p) => [p.name, p.origin.kind, p.origin.where])).toEqual([["acme-word-count", "path", "plugins[0]"]]);
    const tools = await kernel.getAvailableTools();
    expect(tools.map((t) => t.name)).toEqual(["word_count"]);
    expect(await tools[0]?.invoke({ text: "one two three" })).toBe("words: 3");
    await expect(tools[0]?.invoke({ text: 42 } as never)).rejects.toThrow(/did not match expected schema|expected string/i);
    await kernel.close();
  });

  it("resolves a package name from the config folder, including ESM-only packages", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "node_modules/acme-esm-plugin/package.json": JSON.stringify({
        name: "acme-esm-plugin",
        type: "module",
        exports: { ".": { import: "./index.js" } },
      }),
      "node_modules/acme-esm-plugin/index.js": `export default ({ definePlugin }) => definePlugin({ name: "acme-esm", version: "0.3.0", kernel: ">=0.1.0", setup() {} });`,
      "config.yaml": "plugins:\n  - acme-esm-plugin\n",
    });
    const kernel = await createKernel({ configPath: join(dir, "config.yaml"), env: {}, builtins: false });
    expect(kernel.plugins[0]).toMatchObject({ name: "acme-esm", version: "0.3.0", origin: { kind: "package", spec: "acme-esm-plugin" } });
    await kernel.close();
  });

  it("skips entries with enabled: false", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "p.mjs": "throw new Error('must not be imported')",
      "config.yaml": "plugins:\n  - path: ./p.mjs\n    enabled: false\n",
    });
    const kernel = await createKernel({ configPath: join(dir, "config.yaml"), env: {}, builtins: false });
    expect(kernel.plugins).toEqual([]);
  });

  it("names the entry when a package is not installed", async () => {
    const dir = tempDir();
    writeFiles(dir, { "config.yaml": "plugins:\n  - package: '@acme/not-installed'\n" });
    const err = await failure(createKernel({ configPath: join(dir, "config.yaml"), env: {}, builtins: false }));
    expect(err.code).toBe("ANTLER_ERR_PLUGIN_NOT_FOUND");
    expect(err.message).toContain("plugins[0].package");
  });

  it("rejects a module without a default export, listing what it does export", async () => {
    const dir = tempDir();
    writeFiles(dir, { "p.mjs": "export const plugin = {};", "config.yaml": "plugins:\n  - path: ./p.mjs\n" });
    const err = await failure(createKernel({ configPath: join(dir, "config.yaml"), env: {}, builtins: false }));
    expect(err.code).toBe("ANTLER_ERR_PLUGIN_NO_DEFAULT_EXPORT");
    expect(err.message).toContain("plugins[0]");
    expect(err.message).toContain("plugin");
  });

  it("rejects a kernel range this kernel does not satisfy, naming the entry", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "a.mjs": `export default ({ definePlugin }) => definePlugin({ name: "a", version: "1.0.0", kernel: "^0.1.0", setup() {} });`,
      "old.mjs": `export default ({ definePlugin }) => definePlugin({ name: "old", version: "1.0.0", kernel: "^2.0.0", setup() {} });`,
      "config.yaml": "plugins:\n  - path: ./a.mjs\n  - path: ./old.mjs\n",
    });
    const err = await failure(createKernel({ configPath: join(dir, "config.yaml"), env: {}, builtins: false }));
    expect(err.code).toBe("ANTLER_ERR_PLUGIN_KERNEL_MISMATCH");
    expect(err.message).toMatch(/^plugins\[1\]: plugin "old" needs kernel \^2\.0\.0/);
  });

  it("rejects an invalid manifest with the broken field", async () => {
    const err = await failure(
      createKernel({
        plugins: [{ name: "x", version: "one", kernel: "^0.1.0", setup() {} } as AntlerPlugin],
        discover: false,
        builtins: false,
      }),
    );
    expect(err.code).toBe("ANTLER_ERR_PLUGIN_INVALID_MANIFEST");
    expect(err.message).toContain("version");
  });
});

describe("plugin order and dependencies", () => {
  it("orders plugins so that dependencies set up first, otherwise keeping the given order", async () => {
    const order: string[] = [];
    const p = (name: string, dependsOn: string[] = []) => plugin(name, { dependsOn, setup: () => void order.push(name) });
    await createKernel({ plugins: [p("c", ["b"]), p("a"), p("b", ["a"]), p("d")], discover: false, builtins: false });
    expect(order).toEqual(["a", "b", "c", "d"]);
  });

  it("rejects a duplicate name, naming both entries", async () => {
    const err = await failure(createKernel({ plugins: [plugin("same"), plugin("same")], discover: false, builtins: false }));
    expect(err.code).toBe("ANTLER_ERR_PLUGIN_DUPLICATE");
    expect(err.message).toContain("code plugins[1]");
    expect(err.message).toContain("code plugins[0]");
  });

  it("rejects a missing dependency and says how to add it", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "p.mjs": `export default ({ definePlugin }) => definePlugin({ name: "needs-mcp", version: "1.0.0", kernel: "^0.1.0", dependsOn: ["@antler/plugin-mcp"], setup() {} });`,
      "config.yaml": "plugins:\n  - path: ./p.mjs\n",
    });
    const err = await failure(createKernel({ configPath: join(dir, "config.yaml"), env: {}, builtins: false }));
    expect(err.code).toBe("ANTLER_ERR_PLUGIN_MISSING_DEPENDENCY");
    expect(err.message).toContain("plugins[0]");
    expect(err.message).toContain("@antler/plugin-mcp");
  });

  it("rejects a dependency cycle and shows it", async () => {
    const err = await failure(
      createKernel({
        plugins: [plugin("x", { dependsOn: ["y"] }), plugin("y", { dependsOn: ["z"] }), plugin("z", { dependsOn: ["x"] })],
        discover: false,
        builtins: false,
      }),
    );
    expect(err.code).toBe("ANTLER_ERR_PLUGIN_DEPENDENCY_CYCLE");
    expect(err.message).toMatch(/x → y → z → x/);
  });
});

describe("plugin setup", () => {
  it("passes code plugins their validated config with defaults applied", async () => {
    let seen: unknown;
    const p = definePlugin({
      name: "cfg",
      version: "1.0.0",
      kernel: "^0.1.0",
      configSchema: z.object({ retries: z.number().default(3), url: z.string() }),
      setup(ctx) {
        seen = ctx.config;
      },
    });
    await createKernel({ plugins: [{ plugin: p, config: { url: "http://x" } }], discover: false, builtins: false });
    expect(seen).toEqual({ retries: 3, url: "http://x" });
  });

  it("rejects a setup that returns a promise: setup must be synchronous", async () => {
    const err = await failure(
      createKernel({ plugins: [plugin("async", { setup: (async () => {}) as never })], discover: false, builtins: false }),
    );
    expect(err.code).toBe("ANTLER_ERR_PLUGIN_SETUP_ASYNC");
    expect(err.message).toContain("hooks.start");
  });

  it("wraps a throwing setup with the plugin's name and entry", async () => {
    const err = await failure(
      createKernel({
        plugins: [
          plugin("boom", {
            setup() {
              throw new Error("kaput");
            },
          }),
        ],
        discover: false,
        builtins: false,
      }),
    );
    expect(err.code).toBe("ANTLER_ERR_PLUGIN_SETUP_FAILED");
    expect(err.message).toMatch(/code plugins\[0\] \(boom\): setup of plugin "boom" threw: kaput/);
  });

  it("records each plugin's contributions", async () => {
    const p = definePlugin({
      name: "contrib",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.tools.add(defineTool({ name: "t1", description: "d", schema: z.object({}), run: () => "ok" }));
        ctx.commands.add({ name: "contrib hello", summary: "says hello", run: () => 0 });
        ctx.hooks.start.tap(() => {});
      },
    });
    const kernel = await createKernel({ plugins: [p], discover: false, builtins: false });
    expect(kernel.plugins[0]?.contributions).toMatchObject({ tools: ["t1"], commands: ["contrib hello"], hooks: ["start"] });
  });
});

describe("declared CLI options", () => {
  it.each<{ options: Record<string, CliOptionSpec>; message: RegExp }>([
    { options: { config: { type: "string" } }, message: /CLI command "notes list": option --config is the CLI's own/ },
    { options: { limit: { short: "v" } }, message: /option --limit: short must be one letter other than c, h and v \(got "v"\)/ },
    { options: { limit: { short: "ab" } }, message: /short must be one letter/ },
  ])("a declaration the CLI could not honour fails setup, naming the command ($message)", async ({ options, message }) => {
    const p = definePlugin({
      name: "notes",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.commands.add({ name: "notes list", summary: "s", options, run: () => 0 });
      },
    });
    await expect(createKernel({ plugins: [p], discover: false, builtins: false })).rejects.toMatchObject({
      code: "ANTLER_ERR_PLUGIN_SETUP_FAILED",
      message: expect.stringMatching(message),
    });
  });
});

describe("config sections owned by plugins", () => {
  const owner = definePlugin({
    name: "greeting-owner",
    version: "1.0.0",
    kernel: "^0.1.0",
    configSections: {
      greeting: z
        .strictObject({ text: z.string().default("hello"), loud: z.boolean().default(false) })
        .default({ text: "hello", loud: false }),
    },
    setup() {},
  });

  it("validates a plugin's top-level section and gives its defaults while the plugin is loaded", async () => {
    const kernel = await createKernel({
      configText: "preset: none\ngreeting:\n  loud: true\n",
      plugins: [owner],
      discover: false,
      env: {},
    });
    expect(kernel.config.greeting).toEqual({ text: "hello", loud: true });
    const withDefaults = await createKernel({ configText: "preset: none\n", plugins: [owner], discover: false, env: {} });
    expect(withDefaults.config.greeting).toEqual({ text: "hello", loud: false });
  });

  it("reports a bad key inside a plugin's section with its line and a suggestion", async () => {
    const err = (await createKernel({
      configText: "preset: none\ngreeting:\n  lowd: true\n",
      plugins: [owner],
      discover: false,
      env: {},
    }).catch((e: unknown) => e)) as AntlerError;
    expect(err.code).toBe("ANTLER_ERR_CONFIG_INVALID");
    expect(err.message).toMatch(/:3:\d+ greeting\.lowd: unknown key/);
    expect(err.message).toContain('did you mean "loud"');
  });

  it("rejects a section no loaded plugin owns, as an unknown top-level key", async () => {
    const err = (await createKernel({ configText: "preset: none\ngreeting:\n  loud: true\n", discover: false, env: {} }).catch(
      (e: unknown) => e,
    )) as AntlerError;
    expect(err.code).toBe("ANTLER_ERR_CONFIG_INVALID");
    expect(err.message).toMatch(/greeting: unknown key/);
  });

  it("refuses a section claimed by two plugins, naming both", async () => {
    const twin = { ...owner, name: "greeting-twin" };
    const err = (await createKernel({ config: { preset: "none" }, plugins: [owner, twin], discover: false, env: {} }).catch(
      (e: unknown) => e,
    )) as AntlerError;
    expect(err.code).toBe("ANTLER_ERR_PLUGIN_INVALID_MANIFEST");
    expect(err.message).toContain('config section "greeting" of greeting-twin is already owned by greeting-owner');
  });
});
