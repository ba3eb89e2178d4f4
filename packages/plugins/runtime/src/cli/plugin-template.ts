// The files `antler plugin new` writes: a plugin package whose test passes as generated. The versions are the
// ones this repository pins (a test keeps them in step with the root and kernel package.json files).
// `pnpm` is the root package.json's "packageManager" version: the printed pack steps run that pnpm through npx.
export const TEMPLATE_VERSIONS = { kernel: "0.1.0", zod: "4.6.7", typescript: "5.9.3", vitest: "4.1.12", pnpm: "10.34.9" } as const;

export interface TemplateOptions {
  /** The npm package name, e.g. `acme-notes` or `@acme/antler-notes`. */
  name: string;
  /** `workspace:*` inside an Antler checkout's workspace, else a version range. */
  antlerRange: string;
}

/** The name without its scope, as a tool-name prefix: `@acme/antler-notes` → `antler_notes`. */
export function toolPrefix(name: string): string {
  return (
    (name.split("/").pop() ?? name)
      .replace(/[^a-zA-Z0-9]+/g, "_")
      .replace(/^_+|_+$/g, "")
      .slice(0, 50) || "plugin"
  );
}

export function pluginFiles(options: TemplateOptions): Record<string, string> {
  const { name, antlerRange } = options;
  const tool = `${toolPrefix(name)}_greet`;
  const v = TEMPLATE_VERSIONS;
  const packageJson = {
    name,
    version: "0.1.0",
    description: "An Antler plugin: a tool and a middleware.",
    type: "module",
    exports: { ".": { types: "./dist/index.d.ts", default: "./dist/index.js" } },
    types: "./dist/index.d.ts",
    files: ["dist", "README.md"],
    engines: { node: ">=20.11" },
    scripts: { build: "tsc -p tsconfig.json", test: "vitest run" },
    peerDependencies: { "@antler/kernel": `^${v.kernel}`, zod: `^${v.zod}` },
    devDependencies: {
      "@antler/kernel": antlerRange,
      "@antler/plugin-runtime": antlerRange,
      typescript: v.typescript,
      vitest: v.vitest,
      zod: v.zod,
    },
  };
  const tsconfig = {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      declaration: true,
      skipLibCheck: true,
      rootDir: "src",
      outDir: "dist",
    },
    include: ["src"],
  };
  return {
    "package.json": `${JSON.stringify(packageJson, null, 2)}\n`,
    "tsconfig.json": `${JSON.stringify(tsconfig, null, 2)}\n`,
    // Its own config, so that vitest never picks up the config of a repository the package sits in.
    "vitest.config.ts": `import { defineConfig } from "vitest/config";

export default defineConfig({ test: { include: ["test/**/*.test.ts"], testTimeout: 30_000 } });
`,
    // The entry stays light: `antler config check` and `antler plugins list` load it and run setup, and neither
    // builds tools, so the tool's module (and LangChain's tool classes) loads from an async factory on first use.
    "src/index.ts": `import { createToken, definePlugin } from "@antler/kernel";
import { hookContext, refuseToolCall } from "@antler/kernel/authoring";
import { z } from "zod";

/** Greetings so far in one run (one turn): a run-scoped service, made on first use and dropped when the run ends. */
const Greetings = createToken<{ count: number }>(${JSON.stringify(`${name}.greetings`)});

export default definePlugin({
  name: ${JSON.stringify(name)},
  version: "0.1.0",
  kernel: "^${v.kernel}",
  description: "Greets people, at most max_greetings times per turn.",
  configSchema: z.object({
    greeting: z.string().min(1).default("Hello"),
    max_greetings: z.number().int().min(0).default(3),
  }),
  setup(ctx) {
    const { greeting, max_greetings } = ctx.config;
    ctx.provide(Greetings, { lifetime: "run", useFactory: () => ({ count: 0 }) });
    // An async factory: the tool's module loads when tools are first assembled, not when the plugin loads.
    // \`name\` lets \`antler plugins list\` show the tool without building it.
    ctx.tools.add(async () => (await import("./tool.js")).createGreetTool(greeting), { name: ${JSON.stringify(tool)} });
    ctx.middleware.add({
      name: "greeting-limit",
      async wrapToolCall(request, handler) {
        if (request.toolCall.name !== ${JSON.stringify(tool)}) return handler(request);
        const greetings = hookContext(request).resolve(Greetings);
        if (greetings.count >= max_greetings) return refuseToolCall(request, \`it may run at most \${max_greetings} times per turn.\`);
        greetings.count += 1;
        return handler(request);
      },
    });
  },
});
`,
    "src/tool.ts": `import { defineTool } from "@antler/kernel/authoring";
import { z } from "zod";

/** The \`${tool}\` tool, greeting with the plugin's configured greeting. */
export function createGreetTool(greeting: string) {
  return defineTool({
    name: ${JSON.stringify(tool)},
    description: "Greet someone by name.",
    schema: z.object({ name: z.string().describe("Who to greet.") }),
    run: ({ name }) => \`\${greeting}, \${name}!\`,
  });
}
`,
    "test/plugin.test.ts": `import { runPluginConformance, scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import plugin from "../src/index.js";

// The shared suite every Antler plugin passes: manifest, boot/start/close, config validation, tool schemas.
runPluginConformance(plugin, {
  validConfig: { greeting: "Hi", max_greetings: 1 },
  invalidConfigs: [{ greeting: 42 }, { max_greetings: -1 }],
});

describe(${JSON.stringify(name)}, () => {
  it("greets through the tool in a real turn on a scripted model, and refuses a greeting over the limit", async () => {
    const model = scriptedModelsPlugin({
      m: [
        { toolCalls: [{ id: "first", name: ${JSON.stringify(tool)}, args: { name: "Ada" } }] },
        { toolCalls: [{ id: "second", name: ${JSON.stringify(tool)}, args: { name: "Grace" } }] },
        { text: "Greeted Ada." },
      ],
    });
    const client = await AntlerClient.create({
      config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
      plugins: [model, { plugin, config: { greeting: "Hi", max_greetings: 1 } }],
      env: {},
      discover: false,
    });
    try {
      expect(await client.chat("Greet Ada and Grace", { threadId: "t1" })).toBe("Greeted Ada.");
      const tools = (await client.getThread("t1")).messages.filter((m) => m.type === "tool");
      expect(tools.find((m) => m.tool_call_id === "first")).toMatchObject({ status: "success", content: "Hi, Ada!" });
      expect(tools.find((m) => m.tool_call_id === "second")).toMatchObject({
        status: "error",
        content: "Refused: ${tool} was not run: it may run at most 1 times per turn.",
      });
    } finally {
      await client.close();
    }
  });
});
`,
    "README.md": `# ${name}

An Antler plugin: the tool \`${tool}\` and the middleware \`${name}/greeting-limit\`, which
refuses more than \`max_greetings\` greetings per turn.

\`\`\`yaml
plugins:
  - package: ${name}
    config:
      greeting: Hello
      max_greetings: 3
\`\`\`

\`npm test\` runs the plugin conformance suite and one turn on a scripted model; \`npm run build\` writes \`dist/\`.
`,
  };
}
