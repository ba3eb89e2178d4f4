// `@antler/kernel/testing/offline` in a plain Node process, as an app or a demo would use it: the built entry loads
// without vitest, and its loopback server answers a chat completion.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { describeUnless } from "../src/testing/index.js";

const kernelDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const bundle = join(kernelDir, "dist/bundle/testing-offline.js");

describeUnless(
  "@antler/kernel/testing/offline outside a test runner",
  existsSync(bundle)
    ? undefined
    : "needs the kernel built (pnpm run build): it imports dist/bundle/testing-offline.js in a plain node process",
  () => {
    it("starts the loopback model server and answers a completion in a plain node process, without loading vitest", async () => {
      const dir = mkdtempSync(join(tmpdir(), "antler-offline-"));
      // Resolved as a package would be: node_modules/@antler/kernel links to this package.
      mkdirSync(join(dir, "node_modules/@antler"), { recursive: true });
      symlinkSync(kernelDir, join(dir, "node_modules/@antler/kernel"), "dir");
      // Any import of vitest (or @vitest/*) from the entry fails the process.
      writeFileSync(
        join(dir, "no-vitest-hook.mjs"),
        [
          "export async function resolve(specifier, context, next) {",
          '  if (specifier === "vitest" || specifier.startsWith("vitest/") || specifier.startsWith("@vitest/")) {',
          "    throw new Error(`vitest imported: ${specifier} from ${context.parentURL}`);",
          "  }",
          "  return next(specifier, context);",
          "}",
        ].join("\n"),
      );
      writeFileSync(
        join(dir, "no-vitest.mjs"),
        'import { register } from "node:module";\nregister("./no-vitest-hook.mjs", import.meta.url);\n',
      );
      writeFileSync(
        join(dir, "app.mjs"),
        [
          'import { loopbackModelConfig, startOpenAICompatibleServer } from "@antler/kernel/testing/offline";',
          'const server = await startOpenAICompatibleServer({ script: [{ text: "offline hello" }] });',
          'const res = await fetch(`${server.url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }) });',
          "const body = await res.json();",
          "await server.close();",
          'console.log(JSON.stringify({ text: body.choices[0].message.content, config: loopbackModelConfig(server.url).includes("    provider: openai") }));',
        ].join("\n"),
      );
      try {
        const { stdout } = await promisify(execFile)(process.execPath, ["--import", "./no-vitest.mjs", "app.mjs"], { cwd: dir });
        expect(JSON.parse(stdout.trim())).toEqual({ text: "offline hello", config: true });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  },
);
