import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { antlerBinPath, antlerCliBuilt, startAntlerServe } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import { tempDir } from "./fixtures.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const pluginDist = resolve(here, "../dist/index.js");
const built = existsSync(pluginDist) && antlerCliBuilt();

describe.skipIf(!built)("antler serve (compiled CLI in a child process; needs `npx tsc -b packages/plugins/gateway` first)", () => {
  it("binds loopback on the given port, logs the URL, serves authenticated requests and exits 0 on SIGTERM", async () => {
    const dir = tempDir();
    const config = join(dir, "config.yaml");
    writeFileSync(
      config,
      [
        "storage:",
        "  backend: sqlite",
        "plugins:",
        `  - path: ${JSON.stringify(pluginDist)}`,
        "    config:",
        "      port: 8001",
        "      auth:",
        "        api_keys:",
        "          - key: $GATEWAY_TEST_KEY",
        "            user: carol",
        "",
      ].join("\n"),
    );
    const serve = await startAntlerServe({ cwd: dir, env: { GATEWAY_TEST_KEY: "carol-key-0123456789abcdef" }, timeoutMs: 20_000 });
    try {
      const { url } = serve;
      expect(url).not.toContain(":8001");
      expect((await fetch(`${url}/health`)).status).toBe(200);
      expect((await fetch(`${url}/api/threads`)).status).toBe(401);
      const created = await fetch(`${url}/api/threads`, {
        method: "POST",
        headers: { authorization: "Bearer carol-key-0123456789abcdef", "content-type": "application/json" },
        body: JSON.stringify({ thread_id: "from-cli" }),
      });
      expect(created.status).toBe(201);
      expect(await created.json()).toMatchObject({ thread_id: "from-cli", user_id: "carol" });
      expect(await serve.stop()).toBe(0);
      expect(serve.output).toContain("SIGTERM: shutting down");
      expect(serve.output).toContain("gateway stopped");
    } finally {
      if (serve.child.exitCode === null) serve.child.kill("SIGKILL");
    }
  });

  it("fails with a clear message for a bad --port", async () => {
    const dir = tempDir();
    const config = join(dir, "config.yaml");
    writeFileSync(config, `plugins:\n  - path: ${JSON.stringify(pluginDist)}\n    config: { auth: { mode: none } }\n`);
    const child = spawn(process.execPath, [antlerBinPath(), "serve", "--config", config, "--port", "http"], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
    expect(code).toBe(2);
    expect(stderr).toContain('antler serve: --port must be an integer, got "http"');
  });
});
