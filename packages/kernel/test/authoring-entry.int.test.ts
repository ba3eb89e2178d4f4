// `@antler/kernel/authoring` as users get it (the package's built export, self-referenced by name from a child
// process): importing it loads no LangChain module, and its helpers still work, loading LangChain when first
// needed. Every module the child loads is recorded by a module-loading hook. Needs `pnpm run build`.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const KERNEL_DIR = join(import.meta.dirname, "..");

// Written synchronously: the hooks run on their own thread, whose buffered stderr Node 24 may drop at exit.
const HOOK = `import { writeSync } from "node:fs";
export async function load(url, context, next) {
  const result = await next(url, context);
  writeSync(2, "LOADED " + url + "\\n");
  return result;
}`;

// Runs inside packages/kernel, so "@antler/kernel/authoring" resolves through package.json's exports to dist/bundle.
const SCRIPT = `
import { writeSync } from "node:fs";
import { register } from "node:module";
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOK)}`)});
const mark = (name) => writeSync(2, "MARK " + name + "\\n");
const authoring = await import("@antler/kernel/authoring");
mark("imported");
const { z } = await import("zod");
const echo = authoring.defineTool({
  name: "echo",
  description: "Echo a text back.",
  schema: z.object({ text: z.string() }),
  run: ({ text }) => "echo: " + text,
});
let early;
try {
  authoring.refuseToolCall({ toolCall: { name: "echo", id: "c0" } }, "not yet");
} catch (error) {
  early = { code: error.code, hint: error.hint };
}
let handedToLangChain;
try {
  void echo.lc_namespace;
} catch (error) {
  handedToLangChain = error.code;
}
mark("defined");
// A plugin whose setup calls defineTool: booting it (what \`antler config check\` does) builds no tool either.
const { createKernel } = await import("@antler/kernel");
const plugin = {
  name: "setup-tools",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(authoring.defineTool({ name: "shout", description: "Shout a text.", schema: z.object({ text: z.string() }), run: ({ text }) => text.toUpperCase() }));
  },
};
const kernel = await createKernel({ discover: false, builtins: false, cwd: process.cwd(), config: { logging: { level: "error" } }, plugins: [plugin] });
const listed = kernel.plugins.find((p) => p.name === "setup-tools").contributions.tools;
mark("booted");
await kernel.start();
const [assembled] = await kernel.getAvailableTools();
const shouted = await assembled.invoke({ text: "hi" });
await kernel.close();
const invoked = await echo.invoke({ text: "hi" });
const { StructuredTool } = await import("@langchain/core/tools");
const refused = authoring.refuseToolCall({ toolCall: { name: "echo", id: "c1" } }, "no echoes today.");
const ended = authoring.endTurn("Done.", { stopReason: "limit" });
const defined = authoring.defineTool({ name: "later", description: "Built at once.", schema: z.object({}), run: () => "ok" });
mark("done");
process.stdout.write(JSON.stringify({
  name: echo.name,
  invoked,
  handedToLangChain,
  listed,
  shouted,
  assembledIsTool: assembled instanceof StructuredTool,
  early,
  standInIsTool: echo instanceof StructuredTool,
  standInClass: echo.constructor === defined.constructor,
  laterIsTool: defined instanceof StructuredTool,
  refused: refused.content,
  ended: ended.update.stop_reason,
}));
`;

const work = mkdtempSync(join(tmpdir(), "antler-authoring-entry-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The modules loaded between two marks (or from the start), and what the script printed. */
function runChild(): { loadedBefore: (mark: string) => string[]; out: Record<string, unknown> } {
  const file = join(KERNEL_DIR, `.authoring-entry-${process.pid}.mjs`);
  writeFileSync(file, SCRIPT);
  try {
    const child = spawnSync(process.execPath, [file], { cwd: work, encoding: "utf8", timeout: 60_000 });
    expect(child.status, `the child failed:\n${child.stderr}`).toBe(0);
    const lines = child.stderr.split("\n");
    const loadedBefore = (mark: string) => {
      const end = lines.indexOf(`MARK ${mark}`);
      expect(end, `mark ${mark} in:\n${child.stderr}`).toBeGreaterThan(0);
      return lines
        .slice(0, end)
        .filter((l) => l.startsWith("LOADED "))
        .map((l) => l.slice("LOADED ".length));
    };
    return { loadedBefore, out: JSON.parse(child.stdout) as Record<string, unknown> };
  } finally {
    rmSync(file, { force: true });
  }
}

describe("@antler/kernel/authoring, built", () => {
  it("loads no LangChain module when imported, when defineTool is called or when a setup that calls it boots, and its helpers work once LangChain loads", () => {
    expect(existsSync(join(KERNEL_DIR, "dist/bundle/authoring.js")), "packages/kernel has no dist; run `pnpm run build`").toBe(true);
    const { loadedBefore, out } = runChild();
    const imported = loadedBefore("imported");
    expect(
      imported.some((u) => u.endsWith("/dist/bundle/authoring.js")),
      "the hook saw the built entry load",
    ).toBe(true);
    expect(imported.filter((u) => /\/node_modules\/(@langchain\/|langchain\/)/.test(u))).toEqual([]);
    expect(loadedBefore("booted").filter((u) => u.includes("/node_modules/@langchain/"))).toEqual([]);
    // The same hook sees LangChain load once a helper needs it.
    expect(loadedBefore("done").some((u) => u.includes("/node_modules/@langchain/core/"))).toBe(true);
    expect(out).toEqual({
      name: "echo",
      invoked: "echo: hi",
      handedToLangChain: "ANTLER_ERR_KERNEL_STATE",
      listed: ["shout"],
      shouted: "HI",
      assembledIsTool: true,
      early: { code: "ANTLER_ERR_KERNEL_STATE", hint: expect.stringContaining("loadAuthoring") },
      standInIsTool: true,
      standInClass: true,
      laterIsTool: true,
      refused: "Refused: echo was not run: no echoes today.",
      ended: "limit",
    });
  });
});
