import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "./fixtures.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const bin = resolve(here, "../../../kernel/bin/antler.js");
const pluginDist = resolve(here, "../dist/index.js");
const built = existsSync(pluginDist) && existsSync(resolve(here, "../../../kernel/dist/bundle/cli.js"));

function waitFor(child: ChildProcess, pattern: RegExp, output: { text: string }): Promise<RegExpMatchArray> {
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; output so far:\n${output.text}`)), 20_000);
    const check = () => {
      const match = output.text.match(pattern);
      if (match) {
        clearTimeout(timer);
        resolvePromise(match);
      }
    };
    child.stdout?.on("data", (chunk: Buffer) => {
      output.text += chunk.toString();
      check();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output.text += chunk.toString();
    });
    child.once("exit", (code) => reject(new Error(`antler serve exited early (${code}):\n${output.text}`)));
  });
}

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
    const child = spawn(process.execPath, [bin, "serve", "--config", config, "--port", "0"], {
      cwd: dir,
      env: { ...process.env, GATEWAY_TEST_KEY: "carol-key-0123456789abcdef", ANTLER_CONFIG: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = { text: "" };
    try {
      const [, url] = await waitFor(child, /gateway listening on (http:\/\/127\.0\.0\.1:\d+)/, output);
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
      const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(output.text).toContain("SIGTERM: shutting down");
      expect(output.text).toContain("gateway stopped");
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it("fails with a clear message for a bad --port", async () => {
    const dir = tempDir();
    const config = join(dir, "config.yaml");
    writeFileSync(config, `plugins:\n  - path: ${JSON.stringify(pluginDist)}\n    config: { auth: { mode: none } }\n`);
    const child = spawn(process.execPath, [bin, "serve", "--config", config, "--port", "http"], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
    expect(code).toBe(1);
    expect(stderr).toContain("--port http is not a port number");
  });
});
