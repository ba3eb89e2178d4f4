import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KernelConfigInput } from "@antler/kernel";
import { createTestKernel } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import plugin from "../src/plugin.js";
import { tempDir } from "./fixtures.js";

const kernels: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const k of kernels.splice(0)) await k.close();
});

/** The real runtime plugin, alone, with two models: one that sees images and one that does not. */
async function runtimeKernel(config: Partial<KernelConfigInput> = {}, cwd?: string) {
  const kernel = await createTestKernel({
    plugins: [plugin],
    cwd,
    config: {
      models: [
        { name: "text-only", provider: "scripted" },
        { name: "eyes", provider: "scripted", supports_vision: true },
      ],
      ...config,
    },
  });
  kernels.push(kernel);
  return kernel;
}

async function builtinNames(options: { modelName?: string; context?: Record<string, unknown> }): Promise<string[]> {
  const kernel = await runtimeKernel();
  const entries = await kernel.assembleTools({ includeMcp: false, ...options });
  return entries.filter((e) => e.source === "builtin").map((e) => e.tool.name);
}

describe("built-in tools assembled through the real runtime plugin", () => {
  it("offers view_image only to a model with supports_vision", async () => {
    expect(await builtinNames({ modelName: "eyes" })).toContain("view_image");
    expect(await builtinNames({ modelName: "text-only" })).not.toContain("view_image");
  });

  it("judges vision by the default model when the assembly names none", async () => {
    const kernel = await runtimeKernel({ default_model: "eyes" });
    expect((await kernel.assembleTools({ includeMcp: false })).map((e) => e.tool.name)).toContain("view_image");
  });

  it("offers setup_agent only in a bootstrap run", async () => {
    expect(await builtinNames({ context: { is_bootstrap: true } })).toContain("setup_agent");
    expect(await builtinNames({ context: { is_bootstrap: false } })).not.toContain("setup_agent");
    expect(await builtinNames({ context: {} })).not.toContain("setup_agent");
    // A truthy string is not the flag.
    expect(await builtinNames({ context: { is_bootstrap: "yes" } })).not.toContain("setup_agent");
  });

  it("offers update_agent only to a named custom agent outside bootstrap", async () => {
    expect(await builtinNames({ context: { agent_name: "researcher" } })).toContain("update_agent");
    expect(await builtinNames({ context: { agent_name: "researcher", is_bootstrap: true } })).not.toContain("update_agent");
    expect(await builtinNames({ context: {} })).not.toContain("update_agent");
  });

  it("offers present_files in every assembly", async () => {
    for (const options of [
      { modelName: "text-only", context: {} },
      { modelName: "eyes", context: { is_bootstrap: true } },
      { modelName: "text-only", context: { agent_name: "researcher" } },
    ]) {
      expect(await builtinNames(options)).toContain("present_files");
    }
  });

  it("gives exactly present_files, view_image and setup_agent to a vision model bootstrapping an agent", async () => {
    expect((await builtinNames({ modelName: "eyes", context: { is_bootstrap: true, agent_name: "new-one" } })).sort()).toEqual([
      "present_files",
      "setup_agent",
      "view_image",
    ]);
  });
});

describe("tools: entries of config.yaml", () => {
  /** A real module file next to the config: one tool export and one factory export. */
  function writeToolModule(dir: string): void {
    const langchainTools = import.meta.resolve("@langchain/core/tools");
    const zod = import.meta.resolve("zod");
    writeFileSync(
      join(dir, "my-tools.mjs"),
      [
        `import { tool } from ${JSON.stringify(langchainTools)};`,
        `import { z } from ${JSON.stringify(zod)};`,
        `export const shout = tool(({ text }) => text.toUpperCase(), { name: "shout", description: "Upper-cases text.", schema: z.object({ text: z.string() }) });`,
        "export function makeReverse(options) {",
        `  return tool(({ text }) => [...text].reverse().join("") + options.suffix, { name: "reverse", description: "Reverses text.", schema: z.object({ text: z.string() }) });`,
        "}",
        "",
      ].join("\n"),
    );
  }

  const toolsConfig = {
    tool_groups: [{ name: "loud" }, { name: "backwards" }],
    tools: [
      { name: "shout", group: "loud", use: "./my-tools.mjs:shout", idempotent: true },
      { name: "reverse", group: "backwards", use: "./my-tools.mjs:makeReverse", options: { suffix: "!" } },
    ],
  };

  it("loads a tool export and a factory export (called with the entry's options) as config tools, idempotent only when the entry says", async () => {
    const dir = tempDir();
    writeToolModule(dir);
    const kernel = await runtimeKernel(toolsConfig, dir);
    const entries = await kernel.assembleTools({ includeMcp: false });
    const config = entries.filter((e) => e.source === "config");
    expect(config.map((e) => [e.tool.name, e.group, e.plugin, e.idempotent === true])).toEqual([
      ["shout", "loud", "@antler/plugin-runtime", true],
      ["reverse", "backwards", "@antler/plugin-runtime", false],
    ]);
    const byName = new Map(config.map((e) => [e.tool.name, e.tool]));
    expect(await byName.get("shout")?.invoke({ text: "hi" })).toBe("HI");
    expect(await byName.get("reverse")?.invoke({ text: "abc" })).toBe("cba!");
  });

  it("keeps only the config tools of the requested groups, and every built-in", async () => {
    const dir = tempDir();
    writeToolModule(dir);
    const kernel = await runtimeKernel(toolsConfig, dir);
    const names = (await kernel.assembleTools({ includeMcp: false, groups: ["loud"] })).map((e) => e.tool.name);
    expect(names).toContain("shout");
    expect(names).not.toContain("reverse");
    expect(names).toContain("present_files");
  });

  it("lists config tools by their configured names at boot, before any module loads", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "my-tools.mjs"), 'throw new Error("loaded at boot");\n');
    const kernel = await runtimeKernel(toolsConfig, dir);
    const runtime = kernel.plugins.find((p) => p.name === "@antler/plugin-runtime");
    expect(runtime?.contributions.tools).toEqual(expect.arrayContaining(["shout", "reverse", "present_files"]));
  });

  it("fails the boot, naming the entry, when a config tool's module does not resolve or names no export", async () => {
    const dir = tempDir();
    const missing = (await runtimeKernel({ tools: [{ name: "x", use: "./nowhere.mjs:x" }] }, dir).catch((e: unknown) => e)) as {
      code?: string;
      where?: string;
    };
    expect(missing.code).toBe("ANTLER_ERR_PLUGIN_NOT_FOUND");
    expect(missing.where).toContain("tools[0].use");
    const bare = (await runtimeKernel({ tools: [{ name: "x", use: "./my-tools.mjs" }] }, dir).catch((e: unknown) => e)) as {
      code?: string;
      message?: string;
    };
    expect(bare.code).toBe("ANTLER_ERR_CONFIG_INVALID");
    expect(bare.message).toContain("does not name an export");
  });

  it("fails the assembly with TOOL_INVALID naming the entry when an export is neither a tool nor a factory", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "my-tools.mjs"), "export const notATool = 42;\n");
    const kernel = await runtimeKernel({ tools: [{ name: "x", use: "./my-tools.mjs:notATool" }] }, dir);
    const err = (await kernel.assembleTools({ includeMcp: false }).catch((e: unknown) => e)) as { code?: string; message?: string };
    expect(err.code).toBe("ANTLER_ERR_TOOL_INVALID");
    expect(err.message).toContain("./my-tools.mjs:notATool");
  });
});
