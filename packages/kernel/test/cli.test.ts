import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../src/testing/index.js";
import { tempDir, writeFiles } from "./fixtures.js";

const cli = (args: string[], cwd: string) => runCli(args, { cwd });

const PLUGIN = `export default ({ definePlugin, defineTool, z }) => definePlugin({
  name: "greeter", version: "2.0.0", kernel: "^0.1.0",
  configSchema: z.object({ greeting: z.string() }),
  setup(ctx) {
    ctx.tools.add(defineTool({ name: "greet", description: "Greets someone.", schema: z.object({ who: z.string() }), run: ({ who }) => ctx.config.greeting + " " + who }));
    ctx.commands.add({ name: "greeter say", summary: "prints the greeting", run: (args, io) => { io.stdout.write(ctx.config.greeting + " " + args.join(" ") + "\\n"); return 0; } });
  },
});`;

describe("antler CLI", () => {
  it("--help lists the commands the configured plugins contribute", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "greeter.js": PLUGIN,
      "package.json": '{"type":"module"}',
      "config.yaml": "plugins:\n  - path: ./greeter.js\n    config: { greeting: hi }\n",
    });
    const { code, out } = await cli(["--help"], dir);
    expect(code).toBe(0);
    expect(out).toMatch(/config check\s+/);
    expect(out).toMatch(/greeter say\s+prints the greeting/);
    expect(out).toContain(`Plugin commands come from ${join(dir, "config.yaml")}`);
  });

  it("--help still answers, with the reason, when the config does not load or is absent", async () => {
    const dir = tempDir();
    writeFiles(dir, { "config.yaml": "plugins:\n  - path: ./missing.js\n" });
    const broken = await cli(["--help"], dir);
    expect(broken.code).toBe(0);
    expect(broken.out).toMatch(/config check\s+/);
    expect(broken.out).toContain("Plugin commands are not listed:");
    expect(broken.out).toContain("antler config check");
    const empty = await cli(["help"], tempDir());
    expect(empty.code).toBe(0);
    expect(empty.out).toContain("Plugin commands come from the default preset (no config.yaml found");
    expect(empty.out).toMatch(/run\s+Run one turn/);
  });

  it("config check exits 0 for a valid config", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "greeter.js": PLUGIN,
      "package.json": '{"type":"module"}',
      "config.yaml": "plugins:\n  - path: ./greeter.js\n    config: { greeting: hi }\n",
    });
    const { code, out } = await cli(["config", "check"], dir);
    expect(code).toBe(0);
    expect(out).toMatch(/config\.yaml is valid: 1 plugin\(s\) \(\+\d+ from the default preset\), \d+ tool\(s\)/);
  });

  it("config check exits 1 with the line number and a suggestion for a misspelt key", async () => {
    const dir = tempDir();
    writeFiles(dir, { "bad.yaml": "logging:\n  level: info\nsandbx:\n  allow_host_bash: true\n" });
    const { code, err } = await cli(["config", "check", "bad.yaml"], dir);
    expect(code).toBe(1);
    expect(err).toContain(`${join(dir, "bad.yaml")}:3:1 sandbx: unknown key "sandbx"`);
    expect(err).toContain('did you mean "sandbox"?');
  });

  it("config check exits 1 with plugins[i].config.<key> for a bad plugin config", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "greeter.js": PLUGIN,
      "package.json": '{"type":"module"}',
      "config.yaml": "plugins:\n  - path: ./greeter.js\n    config:\n      greeting: 5\n",
    });
    const { code, err } = await cli(["config", "check"], dir);
    expect(code).toBe(1);
    expect(err).toMatch(/config\.yaml:4:17 plugins\[0\]\.config\.greeting: .*expected string/i);
  });

  it("config schema prints JSON Schema with plugin configs composed in", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "greeter.js": PLUGIN,
      "package.json": '{"type":"module"}',
      "config.yaml": "plugins:\n  - path: ./greeter.js\n    config: { greeting: hi }\n",
    });
    const { code, out } = await cli(["config", "schema"], dir);
    expect(code).toBe(0);
    const schema = JSON.parse(out);
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties)).toContain("models");
    const greeter = schema.properties.plugins.items.allOf.find(
      (c: { then: { properties?: { path?: unknown } } }) => c.then.properties?.path,
    )?.then;
    expect(greeter.properties.path).toEqual({ const: "./greeter.js" });
    expect(greeter.properties.config.properties.greeting).toEqual({ type: "string" });
  });

  it("plugins list tells providers, DI services, hook taps and dependencies apart", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "greeter.js": PLUGIN,
      "clock.js": `export default ({ definePlugin, createToken }) => definePlugin({
  name: "clock", version: "1.0.0", kernel: "^0.1.0", dependsOn: ["greeter"],
  setup(ctx) {
    ctx.provide(createToken("clock.now"), { useValue: () => Date.now() });
    ctx.hooks.runStart.tap(() => {});
    ctx.models.addProvider({ id: "frozen", create() { throw new Error("never built here"); } });
  },
});`,
      "package.json": '{"type":"module"}',
      "config.yaml": "plugins:\n  - path: ./greeter.js\n    config: { greeting: hi }\n  - path: ./clock.js\n",
    });
    const { code, out } = await cli(["plugins", "list"], dir);
    expect(code).toBe(0);
    const clock = out.slice(out.indexOf("clock@1.0.0"));
    expect(clock).toMatch(/providers\s+model:frozen\n/);
    expect(clock).toMatch(/services\s+clock\.now\n/);
    expect(clock).toMatch(/hooks\s+runStart\n/);
    expect(clock).toMatch(/depends on\s+greeter\n/);
    const json = JSON.parse((await cli(["plugins", "list", "--json"], dir)).out) as Array<Record<string, unknown>>;
    expect(json.find((p) => p.name === "clock")).toMatchObject({
      services: ["clock.now"],
      providers: ["model:frozen"],
      depends_on: ["greeter"],
    });
  });

  it("plugins list shows name, version, source and contributions", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "greeter.js": PLUGIN,
      "package.json": '{"type":"module"}',
      "config.yaml": "plugins:\n  - path: ./greeter.js\n    config: { greeting: hi }\n",
    });
    const { code, out } = await cli(["plugins", "list"], dir);
    expect(code).toBe(0);
    expect(out).toContain("greeter@2.0.0  (path:./greeter.js)");
    expect(out).toMatch(/tools\s+greet/);
    expect(out).toMatch(/commands\s+greeter say/);
  });

  it("config check and plugins list name a factory's declared tool without building it", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "lazy.js": `export default {
        name: "lazy", version: "1.0.0", kernel: "^0.1.0",
        setup(ctx) {
          ctx.tools.add(() => { throw new Error("the factory ran"); }, { name: "deferred_search", group: "web" });
        },
      };`,
      "package.json": '{"type":"module"}',
      "config.yaml": "preset: none\nplugins:\n  - path: ./lazy.js\n",
    });
    const check = await cli(["config", "check"], dir);
    expect(check.code).toBe(0);
    expect(check.out).toContain("1 tool(s)");
    const list = await cli(["plugins", "list", "--json"], dir);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.out)).toMatchObject([{ name: "lazy", tools: ["deferred_search"] }]);
  });

  it("loads a package entry's light ./plugin export, not the package's main entry, when it has one", async () => {
    const dir = tempDir();
    const plugin = (name: string) => `export default { name: "${name}", version: "1.0.0", kernel: "^0.1.0", setup() {} };`;
    writeFiles(dir, {
      "package.json": '{"type":"module"}',
      "node_modules/light-pkg/package.json": JSON.stringify({
        name: "light-pkg",
        type: "module",
        exports: { ".": "./index.js", "./plugin": "./plugin.js" },
      }),
      "node_modules/light-pkg/index.js": `throw new Error("the main entry was imported");`,
      "node_modules/light-pkg/plugin.js": plugin("light"),
      "node_modules/main-pkg/package.json": JSON.stringify({ name: "main-pkg", type: "module", exports: "./index.js" }),
      "node_modules/main-pkg/index.js": plugin("main"),
      "config.yaml": "preset: none\nplugins:\n  - package: light-pkg\n  - package: main-pkg\n",
    });
    const { code, out, err } = await cli(["plugins", "list", "--json"], dir);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect((JSON.parse(out) as Array<{ name: string }>).map((p) => p.name)).toEqual(["light", "main"]);
  });

  it("dispatches commands contributed by plugins", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "greeter.js": PLUGIN,
      "package.json": '{"type":"module"}',
      "config.yaml": "plugins:\n  - path: ./greeter.js\n    config: { greeting: hello }\n",
    });
    const { code, out } = await cli(["greeter", "say", "world"], dir);
    expect(code).toBe(0);
    expect(out).toBe("hello world\n");
  });

  it("exits 2 with usage for an unknown command", async () => {
    const { code, err } = await cli(["frobnicate"], tempDir());
    expect(code).toBe(2);
    expect(err).toContain('unknown command "frobnicate"');
    expect(err).toContain("config check");
  });
});

describe("antler CLI logging", () => {
  it("writes kernel logs to stderr at config.yaml's logging.level, with trace_id '-' outside a run when enhance is on", async () => {
    const dir = tempDir();
    writeFiles(dir, { "config.yaml": "preset: none\nlogging:\n  level: debug\n  enhance:\n    enabled: true\n" });
    const { code, err } = await cli(["config", "check"], dir);
    expect(code).toBe(0);
    const lines = err
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const booted = lines.find((l) => l.msg === "kernel booted");
    expect(booted).toMatchObject({ level: "debug", trace_id: "-" });
  });

  it("logs only warnings and worse when config.yaml sets no level", async () => {
    const dir = tempDir();
    writeFiles(dir, { "config.yaml": "preset: none\n" });
    const { code, err } = await cli(["config", "check"], dir);
    expect(code).toBe(0);
    expect(err).not.toContain("kernel booted");
  });
});
