import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
const bin = resolve(here, "../../../kernel/bin/antler.js");
const gatewayDist = resolve(here, "../../../plugins/gateway/dist/index.js");
const browserDist = resolve(here, "../dist/index.js");
const built = [gatewayDist, browserDist, resolve(here, "../../../kernel/dist/bundle/cli.js")].every((f) => existsSync(f));

describe.skipIf(!built)("antler serve with the browser tools enabled (compiled CLI; needs `pnpm run build` first)", () => {
  it("exits at start, before listening, with the fix in its message when the configured Chromium is missing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "antler-browser-serve-"));
    const config = join(dir, "config.yaml");
    writeFileSync(
      config,
      [
        "storage:",
        "  backend: memory",
        "plugins:",
        `  - path: ${JSON.stringify(gatewayDist)}`,
        "    config:",
        "      auth: { mode: none }",
        `  - path: ${JSON.stringify(browserDist)}`,
        "    config:",
        "      executable_path: /nonexistent/antler-test/chromium",
        "",
      ].join("\n"),
    );
    const child = spawn(process.execPath, [bin, "serve", "--config", config, "--port", "0"], {
      cwd: dir,
      env: { ...process.env, ANTLER_CONFIG: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      // Booting anyway is the failure under test: stop it rather than wait for the timeout.
      if (output.includes("gateway listening")) child.kill("SIGTERM");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    try {
      const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
      expect(code, output).not.toBe(0);
      expect(code, output).not.toBeNull();
      expect(output).not.toContain("gateway listening");
      expect(output).toContain("ANTLER_ERR_BROWSER_UNAVAILABLE");
      expect(output).toContain("/nonexistent/antler-test/chromium");
      expect(output).toContain("apt-get install -y chromium");
    } finally {
      clearTimeout(timer);
      if (child.exitCode === null) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
