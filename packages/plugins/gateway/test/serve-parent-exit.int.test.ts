// `npx antler serve` in the background: npm does not pass SIGTERM on to the command, so stopping npm used to leave
// the gateway running with no parent. A server started by npm now stops when its parent goes away. The parent here
// is a stand-in for npm: it starts the server with npm's environment marker and exits on SIGTERM without passing
// the signal on.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { antlerBinPath, antlerCliBuilt } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import { tempDir } from "./fixtures.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const pluginDist = resolve(here, "../dist/index.js");
const built = existsSync(pluginDist) && antlerCliBuilt();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; await sleep(100)) if (check()) return;
  throw new Error(`gave up waiting: ${what}`);
}

describe.skipIf(!built)("antler serve started by npm (compiled CLI; needs a build first)", () => {
  it("stops when the npm process that started it exits on SIGTERM without passing the signal on", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "config.yaml"),
      [
        "storage:",
        "  backend: sqlite",
        "plugins:",
        `  - path: ${JSON.stringify(pluginDist)}`,
        "    config: { auth: { mode: none } }",
        "",
      ].join("\n"),
    );
    const log = join(dir, "serve.log");
    // The stand-in for npm: starts the server (its output into a file, which outlives the parent) and exits on SIGTERM.
    const npm = spawn(
      process.execPath,
      [
        "-e",
        [
          'const { spawn } = require("node:child_process");',
          'const { openSync } = require("node:fs");',
          `const out = openSync(${JSON.stringify(log)}, "a");`,
          `const child = spawn(process.execPath, [${JSON.stringify(antlerBinPath())}, "serve", "--config", "config.yaml", "--port", "0"], { stdio: ["ignore", out, out], env: { ...process.env, ANTLER_CONFIG: "", npm_execpath: "/usr/lib/node_modules/npm/bin/npm-cli.js" } });`,
          "console.log(child.pid);",
          'process.on("SIGTERM", () => process.exit(143));',
        ].join("\n"),
      ],
      { cwd: dir, stdio: ["ignore", "pipe", "inherit"] },
    );
    const serverPid = await new Promise<number>((done) =>
      npm.stdout.once("data", (chunk: Buffer) => done(Number(chunk.toString().trim()))),
    );
    try {
      await waitFor("the gateway listening", () => existsSync(log) && readFileSync(log, "utf8").includes("gateway listening on"), 60_000);
      npm.kill("SIGTERM");
      await new Promise((done) => npm.once("exit", done));
      await waitFor("the orphaned gateway to exit", () => !alive(serverPid), 30_000);
      const output = readFileSync(log, "utf8");
      expect(output).toContain("parent exited: shutting down");
      expect(output).toContain("gateway stopped");
    } finally {
      if (alive(serverPid)) process.kill(serverPid, "SIGKILL");
      if (npm.exitCode === null) npm.kill("SIGKILL");
    }
  });
});
