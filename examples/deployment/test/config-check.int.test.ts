import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { CONFIG, DEPLOYMENT_ENV, EXAMPLE_DIR, PLUGIN_PACKAGES } from "./env.js";

const require = createRequire(join(EXAMPLE_DIR, "package.json"));
const ANTLER = join(EXAMPLE_DIR, "node_modules", "@antler", "kernel", "bin", "antler.js");

/** Packages whose compiled entry (what `antler` loads from config.yaml) is missing. */
const unbuilt = PLUGIN_PACKAGES.filter((name) => {
  try {
    return !existsSync(require.resolve(name));
  } catch {
    return true;
  }
});
const kernelBuilt = existsSync(join(EXAMPLE_DIR, "node_modules", "@antler", "kernel", "dist", "cli", "main.js"));
const reason = !kernelBuilt ? "the kernel is not built" : unbuilt.length ? `not built or not installed: ${unbuilt.join(", ")}` : "";

// What an operator runs before starting the services: the real CLI, the real file, plugins resolved from this folder.
describe("antler config check on the deployment example", () => {
  it.skipIf(reason !== "")(
    `accepts config.yaml with the deployment's environment${reason ? ` (skipped: ${reason}; run pnpm run build)` : ""}`,
    async () => {
      const { stdout } = await promisify(execFile)(process.execPath, [ANTLER, "config", "check", CONFIG], {
        cwd: EXAMPLE_DIR,
        env: { PATH: process.env.PATH ?? "", ...DEPLOYMENT_ENV },
        timeout: 60_000,
      });
      expect(stdout).toMatch(/✓ .*config\.yaml is valid: 7 plugin\(s\)/);
    },
  );

  it.skipIf(reason !== "")(
    `fails with exit code 1 naming the variable when ANTLER_PG_URL is unset${reason ? ` (skipped: ${reason})` : ""}`,
    async () => {
      const { ANTLER_PG_URL: _unset, ...env } = DEPLOYMENT_ENV;
      const result = await promisify(execFile)(process.execPath, [ANTLER, "config", "check", CONFIG], {
        cwd: EXAMPLE_DIR,
        env: { PATH: process.env.PATH ?? "", ...env },
        timeout: 60_000,
      }).then(
        () => ({ code: 0, stderr: "" }),
        (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/ANTLER_PG_URL/);
    },
  );
});
