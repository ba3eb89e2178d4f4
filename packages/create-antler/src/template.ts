// The files of a generated project: a distribution that runs one real turn offline (`npm start`) and whose tests
// pass as generated (`npm test`). Plain JavaScript, so Node runs every file as written and no build step stands
// between an edit and a run.
import type { PackageManager } from "./args.js";
import { ANTLER_PACKAGES, type TemplateVersions } from "./versions.js";

export const AGENT_NAME = "converter";
export const TOOL_NAME = "convert_units";
/** What `npm start` asks the agent. */
export const START_PROMPT = "Convert 21 c to f";

export interface ProjectTemplateOptions {
  /** The npm package name. */
  name: string;
  packageManager: PackageManager;
  versions: TemplateVersions;
  /** `file:` specs replacing registry versions (see `findTarballs`). */
  tarballs?: { direct: Record<string, string>; overrides: Record<string, string> };
}

/** The files to write, by path relative to the project folder. */
export function projectFiles(options: ProjectTemplateOptions): Record<string, string> {
  return {
    "package.json": packageJson(options),
    "config.yaml": CONFIG_YAML(options.name),
    [`agents/${AGENT_NAME}/config.yaml`]: AGENT_CONFIG,
    [`agents/${AGENT_NAME}/SOUL.md`]: AGENT_SOUL,
    "plugins/units/index.js": UNITS_PLUGIN(options.versions["@antler/kernel"]),
    "plugins/units/tool.js": UNITS_TOOL,
    "plugins/offline-model.js": OFFLINE_MODEL,
    "test/units.test.js": UNITS_TEST,
    "test/agent.test.js": AGENT_TEST,
    "vitest.config.js": VITEST_CONFIG,
    "README.md": readme(options),
    ".gitignore": "node_modules/\n.antler/\n",
  };
}

function packageJson({ name, packageManager, versions, tarballs }: ProjectTemplateOptions): string {
  const antler = (pkg: string) => tarballs?.direct[pkg] ?? `^${versions[pkg as keyof TemplateVersions]}`;
  const overrides = tarballs && Object.keys(tarballs.overrides).length > 0 ? tarballs.overrides : undefined;
  // pnpm resolves the runtime's own "@antler/plugin-cassette": "<version>" from the registry even with a file: spec
  // at the top, so it gets every tarball as an override; npm reuses the top-level copy of the same version.
  const pnpmOverrides = tarballs ? { ...tarballs.direct, ...tarballs.overrides } : undefined;
  const manifest = {
    name,
    version: "0.1.0",
    private: true,
    description: "An Antler distribution: a custom agent and a local plugin.",
    type: "module",
    engines: { node: "^20.19.0 || >=22" },
    scripts: {
      start: `antler run --agent ${AGENT_NAME} "${START_PROMPT}"`,
      chat: `antler chat --agent ${AGENT_NAME}`,
      check: "antler config check",
      test: "vitest run",
    },
    dependencies: {
      ...Object.fromEntries(ANTLER_PACKAGES.map((pkg) => [pkg, antler(pkg)])),
      zod: `^${versions.zod}`,
    },
    devDependencies: { vitest: versions.vitest },
    // The @antler/* packages the ones above depend on, from the same folder of tarballs.
    ...(overrides && packageManager === "npm" ? { overrides } : {}),
    // pnpm builds a dependency's native code only when allowed: better-sqlite3, the SQLite storage's driver.
    ...(packageManager === "pnpm"
      ? { pnpm: { onlyBuiltDependencies: ["better-sqlite3"], ...(pnpmOverrides ? { overrides: pnpmOverrides } : {}) } }
      : {}),
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

const CONFIG_YAML = (
  name: string,
) => `# ${name}: an Antler distribution. \`npx antler config check\` validates this file and every plugin's config.
# Without a \`preset:\` key the default preset loads: the agent runtime, cassette models and SQLite storage (under
# base_dir). Reference: https://github.com/antler-dev/antler/blob/main/docs/reference/config.md
base_dir: .antler
default_model: offline
logging:
  level: warn
# Titles are made by a model call; the offline model answers only the agent, so they are off until you go live.
title:
  enabled: false
models:
  # A scripted stand-in (plugins/offline-model.js): every turn runs for real with no key and no network.
  # README.md ("Going live") shows how to point this at OpenAI, Anthropic or any OpenAI-compatible server.
  - name: offline
    provider: scripted
    description: Offline scripted model; answers unit conversions by calling convert_units.
tool_groups:
  - name: units
plugins:
  - path: ./plugins/offline-model.js
  - path: ./plugins/units/index.js
    config:
      precision: 2
`;

const AGENT_CONFIG = `# A custom agent shipped with this distribution: \`npx antler agents list\` shows it, and
# \`npx antler run --agent ${AGENT_NAME} "..."\` (or \`client.chat(text, { agent: "${AGENT_NAME}" })\`) selects it.
description: Converts between units with the convert_units tool and shows its working.
tool_groups: [units]
`;

const AGENT_SOUL = `You are the Converter of this distribution: a precise assistant for unit conversions.

- Never convert in your head: call \`convert_units\` for every number, then give its result.
- Say which units you converted between, and keep the answer to one or two sentences.
- If a unit is not one the tool knows, say which units it supports instead of guessing.
`;

const UNITS_PLUGIN = (
  kernelVersion: string,
) => `// A local plugin, loaded by path from config.yaml. The entry stays light: it imports the kernel's
// definePlugin and zod only. The tool comes from an async factory, so \`antler config check\` and
// \`antler plugins list\` (which never build tools) load neither the tool's module nor LangChain's tool
// classes; \`name\` lets them list the tool anyway.
import { definePlugin } from "@antler/kernel";
import { z } from "zod";

export default definePlugin({
  name: "units",
  version: "0.1.0",
  kernel: "^${kernelVersion}",
  description: "Converts between units of length, mass and temperature.",
  configSchema: z.object({
    precision: z.number().int().min(0).max(10).default(2).describe("Decimal places in a result."),
  }),
  setup(ctx) {
    ctx.tools.add(async () => (await import("./tool.js")).createConvertTool(ctx.config), { name: "${TOOL_NAME}", group: "units" });
  },
});
`;

const UNITS_TOOL = `import { defineTool } from "@antler/kernel/authoring";
import { z } from "zod";

/** How to turn each unit into its base unit (meters, kilograms, kelvin) and back. */
const UNITS = {
  km: { kind: "length", toBase: (v) => v * 1000, fromBase: (v) => v / 1000 },
  mi: { kind: "length", toBase: (v) => v * 1609.344, fromBase: (v) => v / 1609.344 },
  kg: { kind: "mass", toBase: (v) => v, fromBase: (v) => v },
  lb: { kind: "mass", toBase: (v) => v * 0.45359237, fromBase: (v) => v / 0.45359237 },
  c: { kind: "temperature", toBase: (v) => v + 273.15, fromBase: (v) => v - 273.15 },
  f: { kind: "temperature", toBase: (v) => ((v - 32) * 5) / 9 + 273.15, fromBase: (v) => ((v - 273.15) * 9) / 5 + 32 },
};
const unit = z.enum(Object.keys(UNITS));

/** The \`${TOOL_NAME}\` tool with the plugin's config (\`plugins[].config\` in config.yaml). */
export function createConvertTool({ precision }) {
  return defineTool({
    name: "${TOOL_NAME}",
    description: "Convert a value between units: km and mi, kg and lb, c and f (Celsius and Fahrenheit).",
    schema: z.object({
      value: z.number().describe("The number to convert."),
      from: unit.describe("The unit of value."),
      to: unit.describe("The unit to convert to."),
    }),
    run({ value, from, to }) {
      if (UNITS[from].kind !== UNITS[to].kind) {
        return \`Error: cannot convert \${from} (\${UNITS[from].kind}) to \${to} (\${UNITS[to].kind}); convert km and mi, kg and lb, or c and f.\`;
      }
      const result = UNITS[to].fromBase(UNITS[from].toBase(value));
      return \`\${value} \${from} = \${Number(result.toFixed(precision))} \${to}\`;
    },
  });
}
`;

const OFFLINE_MODEL = `// The offline model: model provider \`scripted\` from Antler's test kit, answering from the function below, so
// \`npm start\` and \`npm test\` run real turns (middleware, tools, storage) with no key and no network.
// @antler/kernel/testing/offline needs no test runner. Replace it with a real model when you go live (README.md).
import { scriptedModelsPlugin } from "@antler/kernel/testing/offline";

const CONVERSION = /(-?\\d+(?:\\.\\d+)?)\\s*(km|mi|kg|lb|c|f)\\b.*?\\b(?:to|in|into)\\s+(km|mi|kg|lb|c|f)\\b/i;

/** One model reply: call ${TOOL_NAME} for a conversion it can read, then answer with the tool's result. */
export function respond(messages) {
  const last = messages.at(-1);
  if (last?.getType() === "tool") return { text: \`\${last.content}.\` };
  const question = [...messages].reverse().find((m) => m.getType() === "human");
  const match = CONVERSION.exec(typeof question?.content === "string" ? question.content : "");
  if (!match) {
    return { text: 'I am the offline model and only convert units. Ask e.g. "Convert 21 c to f", or go live (README.md).' };
  }
  const [, value, from, to] = match;
  return { toolCalls: [{ name: "${TOOL_NAME}", args: { value: Number(value), from: from.toLowerCase(), to: to.toLowerCase() } }] };
}

export default scriptedModelsPlugin({ offline: respond });
`;

const UNITS_TEST = `import { runPluginConformance } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import units from "../plugins/units/index.js";
import { createConvertTool } from "../plugins/units/tool.js";

// The shared suite every Antler plugin passes: manifest, boot/start/close, config validation, tool schemas.
runPluginConformance(units, {
  validConfig: { precision: 1 },
  invalidConfigs: [{ precision: "two" }, { precision: -1 }],
});

describe("${TOOL_NAME}", () => {
  const tool = createConvertTool({ precision: 2 });

  it("converts length, mass and temperature", async () => {
    expect(await tool.invoke({ value: 21, from: "c", to: "f" })).toBe("21 c = 69.8 f");
    expect(await tool.invoke({ value: 10, from: "km", to: "mi" })).toBe("10 km = 6.21 mi");
    expect(await tool.invoke({ value: 1, from: "lb", to: "kg" })).toBe("1 lb = 0.45 kg");
  });

  it("answers a conversion between different kinds with an error the model can act on", async () => {
    expect(await tool.invoke({ value: 3, from: "km", to: "kg" })).toMatch(/^Error: cannot convert km \\(length\\) to kg \\(mass\\)/);
  });
});
`;

const AGENT_TEST = `// A real turn through the distribution as config.yaml describes it: the default preset, the ${AGENT_NAME} agent,
// the units plugin and the offline scripted model. Only the data folder differs: a temp dir per test file.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AntlerClient } from "@antler/plugin-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const dataDir = mkdtempSync(join(tmpdir(), "antler-app-"));
let client;

beforeAll(async () => {
  const config = readFileSync(join(root, "config.yaml"), "utf8").replace(/^base_dir: .*$/m, \`base_dir: \${JSON.stringify(dataDir)}\`);
  client = await AntlerClient.create({ configText: config, cwd: root, env: {}, discover: false });
});

afterAll(async () => {
  await client?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the ${AGENT_NAME} agent", () => {
  it("is shipped with the distribution", async () => {
    const { agents } = await client.listAgents();
    expect(agents.find((a) => a.name === "${AGENT_NAME}")).toMatchObject({ scope: "shared", tool_groups: ["units"] });
  });

  it("answers a conversion by calling ${TOOL_NAME} in a real turn", async () => {
    const answer = await client.chat("Convert 21 c to f", { threadId: "convert-1", agent: "${AGENT_NAME}" });
    expect(answer).toBe("21 c = 69.8 f.");
    const thread = await client.getThread("convert-1");
    const result = thread.messages.find((m) => m.type === "tool");
    expect(result).toMatchObject({ name: "${TOOL_NAME}", status: "success", content: "21 c = 69.8 f" });
  });

  it("gives the model its SOUL.md and the units tool", async () => {
    await client.chat("Convert 5 km to mi", { threadId: "convert-2", agent: "${AGENT_NAME}" });
    // The scripted provider hands out one model per name: the one this run called, with what it was asked.
    const model = await client.kernel.createModel("offline");
    const call = model.calls.at(-1);
    expect(call.tools).toContain("${TOOL_NAME}");
    // The system message is content blocks; SOUL.md is in one of them.
    expect(JSON.stringify(call.messages.map((m) => m.content))).toContain("You are the Converter");
  });
});
`;

const VITEST_CONFIG = `import { defineConfig } from "vitest/config";

// Its own config, so vitest never picks up the config of a folder this project sits in.
export default defineConfig({ test: { include: ["test/**/*.test.js"], testTimeout: 30_000 } });
`;

function readme({ name, packageManager }: ProjectTemplateOptions): string {
  const run = packageManager === "pnpm" ? "pnpm" : "npm";
  const exec = packageManager === "pnpm" ? "pnpm exec" : "npx";
  return `# ${name}

An [Antler](https://github.com/antler-dev/antler) distribution, made with \`create-antler\`: a custom agent, a
local plugin with one tool, and tests. It runs offline as generated: the model is a scripted stand-in until you
point \`config.yaml\` at a real one.

\`\`\`sh
${run} start       # one turn: the ${AGENT_NAME} agent answers "${START_PROMPT}" by calling ${TOOL_NAME}
${run} test        # the plugin conformance suite, the tool, and real turns with the agent (vitest)
${run} run chat    # chat with the agent in the terminal (/exit to leave)
${run} run check   # validate config.yaml and every plugin's config
\`\`\`

\`${exec} antler run --agent ${AGENT_NAME} "Convert 10 km to mi"\` asks something else; \`${exec} antler --help\`
lists every command.

## What is here

| file | what it is |
| --- | --- |
| \`config.yaml\` | the distribution: the model, the tool group \`units\`, the plugins to load. Antler's runtime, cassette models and SQLite storage (under \`.antler/\`) come from the default preset |
| \`agents/${AGENT_NAME}/\` | a custom agent: \`config.yaml\` (description, tool groups) and \`SOUL.md\` (its standing instructions) |
| \`plugins/units/\` | a local plugin: \`index.js\` defines it (\`definePlugin\`, a zod config schema), \`tool.js\` its tool \`${TOOL_NAME}\` (\`defineTool\` from \`@antler/kernel/authoring\`, loaded only when a run builds its tools) |
| \`plugins/offline-model.js\` | the offline model: provider \`scripted\` from \`@antler/kernel/testing/offline\`, answering from a function |
| \`test/\` | \`units.test.js\` runs the plugin conformance suite and the tool; \`agent.test.js\` runs real turns with the agent |

## Going live

Install a model provider plugin and replace the \`offline\` model, for example with OpenAI (or any
OpenAI-compatible server through \`base_url\`):

\`\`\`sh
${packageManager === "pnpm" ? "pnpm add" : "npm install"} @antler/plugin-openai
\`\`\`

\`\`\`yaml
default_model: gpt
title:
  enabled: true
models:
  - name: gpt
    provider: openai
    model: gpt-4o-mini
    api_key: $OPENAI_API_KEY
plugins:
  - package: "@antler/plugin-openai"
  - path: ./plugins/units/index.js
    config:
      precision: 2
\`\`\`

\`test/agent.test.js\` runs \`config.yaml\` as it is. To keep the tests offline after going live, copy the
offline version to \`config.offline.yaml\` and read that one in the test instead.

## Next steps

- Add tools or middleware to \`plugins/units/\`, or start a plugin package with \`${exec} antler plugin new <name>\`.
- Add agents under \`agents/<name>/\`; \`${exec} antler agents list\` shows them.
- Docs: [writing a plugin](https://github.com/antler-dev/antler/blob/main/docs/guides/writing-a-plugin.md),
  [config.yaml](https://github.com/antler-dev/antler/blob/main/docs/reference/config.md),
  [the CLI](https://github.com/antler-dev/antler/blob/main/docs/reference/cli.md).
`;
}
