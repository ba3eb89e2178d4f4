// `antler serve` with the gateway where `@antler/plugin-mcp` is not installed. The workspace links the package, so
// the child processes run with a module resolve hook (node --import) that answers for it exactly as Node does for a
// package that is not there (ERR_MODULE_NOT_FOUND); everything else resolves as usual.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { antlerCliBuilt, startAntlerServe } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import { tempDir } from "./fixtures.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const gatewayDist = resolve(here, "../dist/index.js");
const KEY = "carol-key-0123456789abcdef";

/** Writes the hook that hides `@antler/plugin-mcp`; returns the NODE_OPTIONS that load it. */
function hideMcpPackage(dir: string): string {
  writeFileSync(
    join(dir, "hide-mcp-hooks.mjs"),
    [
      "export async function resolve(specifier, context, next) {",
      '  if (specifier === "@antler/plugin-mcp" || specifier.startsWith("@antler/plugin-mcp/")) {',
      "    const error = new Error(`Cannot find package '${specifier}' imported from ${context.parentURL}`);",
      '    error.code = "ERR_MODULE_NOT_FOUND";',
      "    throw error;",
      "  }",
      "  return next(specifier, context);",
      "}",
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "hide-mcp.mjs"),
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(dir, "hide-mcp-hooks.mjs")).href)});\n`,
  );
  return `--import=${pathToFileURL(join(dir, "hide-mcp.mjs")).href}`;
}

describe.skipIf(!antlerCliBuilt())("antler serve with the gateway and without @antler/plugin-mcp installed", () => {
  it("the hook hides the package: importing it from the gateway's folder fails as for a missing package", async () => {
    const dir = tempDir();
    const nodeOptions = hideMcpPackage(dir);
    const child = spawn(process.execPath, ["--input-type=module", "-e", 'await import("@antler/plugin-mcp");'], {
      cwd: resolve(here, ".."),
      env: { ...process.env, NODE_OPTIONS: nodeOptions },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((done) => child.once("exit", done));
    expect(code).not.toBe(0);
    expect(stderr).toContain("ERR_MODULE_NOT_FOUND");
  });

  it("serves the built-in routes, and the MCP admin routes are 404s", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "config.yaml"),
      [
        "storage:",
        "  backend: sqlite",
        "plugins:",
        `  - path: ${JSON.stringify(gatewayDist)}`,
        "    config:",
        "      auth:",
        "        api_keys:",
        "          - key: $GATEWAY_TEST_KEY",
        "            user: carol",
        "",
      ].join("\n"),
    );
    const serve = await startAntlerServe({
      cwd: dir,
      env: { GATEWAY_TEST_KEY: KEY, NODE_OPTIONS: hideMcpPackage(dir) },
      timeoutMs: 30_000,
    });
    try {
      const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
      expect((await fetch(`${serve.url}/health`)).status).toBe(200);
      const created = await fetch(`${serve.url}/api/threads`, { method: "POST", headers, body: JSON.stringify({ thread_id: "no-mcp" }) });
      expect(created.status).toBe(201);
      expect(await created.json()).toMatchObject({ thread_id: "no-mcp", user_id: "carol" });
      expect((await fetch(`${serve.url}/api/mcp/config`, { headers })).status).toBe(404);
      expect((await fetch(`${serve.url}/api/mcp/cache/reset`, { method: "POST", headers })).status).toBe(404);
      expect((await fetch(`${serve.url}/api/threads/no-mcp/background-tasks`, { headers })).status).toBe(404);
      expect(await serve.stop()).toBe(0);
      expect(serve.output).not.toContain("plugin-mcp");
    } finally {
      if (serve.child.exitCode === null) serve.child.kill("SIGKILL");
    }
  });
});
