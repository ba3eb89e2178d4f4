import { readFileSync } from "node:fs";
import { createTestKernel } from "@antler/kernel/testing";
import ts from "typescript";
import { afterEach, describe, expect, it } from "vitest";
import plugin from "../src/plugin.js";

const kernels: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const k of kernels.splice(0)) await k.close();
});

/** Module specifiers a file imports at run time (type-only imports left out). */
function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly) {
      const named = statement.importClause?.namedBindings;
      const allTypes =
        named !== undefined &&
        ts.isNamedImports(named) &&
        statement.importClause?.name === undefined &&
        named.elements.every((e) => e.isTypeOnly);
      if (!allTypes) out.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return out;
}

describe("@antler/plugin-runtime entry", () => {
  it("lists in package.json exactly the CLI commands it registers, so antler --help can show them unloaded", async () => {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      antler: { commands: Array<{ name: string; summary: string }> };
    };
    const kernel = await createTestKernel({ plugins: [plugin] });
    kernels.push(kernel);
    const registered = kernel.commands.map((c) => ({ name: c.name, summary: c.summary }));
    expect(registered).toEqual(manifest.antler.commands);
  });

  it("loads only the kernel and its config schemas when the plugin module is imported (middleware, tools and LangChain load later)", () => {
    expect(runtimeImports(new URL("../src/plugin.ts", import.meta.url).pathname)).toEqual([
      "@antler/kernel",
      "./config.js",
      "./model-calls.js",
    ]);
    // Model call planning and budgets: model-kit and Redis load with the first planned model, not with the plugin.
    expect(runtimeImports(new URL("../src/model-calls.ts", import.meta.url).pathname)).toEqual([
      "@antler/kernel",
      "./admission.js",
      "./config.js",
      "./errors.js",
    ]);
    expect(runtimeImports(new URL("../src/config.ts", import.meta.url).pathname)).toEqual([
      "@antler/kernel",
      "@antler/kernel/config",
      "zod",
    ]);
  });

  it("fills every default-chain slot, in order, under the bare slot names", async () => {
    const kernel = await createTestKernel({ plugins: [plugin], config: { todo: { enabled: true } } });
    kernels.push(kernel);
    const chain = await kernel.assembleMiddleware();
    expect(chain.map((e) => e.name)).toEqual([
      "ThreadData",
      "Uploads",
      "DanglingToolCall",
      "LLMErrorHandling",
      "ToolErrorHandling",
      "Todo",
      "Title",
      "LoopDetection",
      "TokenUsage",
      "Clarification",
    ]);
    expect(new Set(chain.map((e) => e.plugin))).toEqual(new Set(["@antler/plugin-runtime"]));
  });
});
