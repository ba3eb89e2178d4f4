// What the channel providers' kill -9 tests share: a real `antler serve` (compiled CLI, SQLite) with the gateway,
// the channels runtime and one provider, on an OpenAI-compatible model on loopback whose first call never answers
// (the first process is killed while it waits), and the `antler channels connect` code that binds the user.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { antlerBinPath, antlerCliBuilt, loopbackModelConfig, startOpenAICompatibleServer } from "@antler/kernel/testing";

const run = promisify(execFile);
const plugins = resolve(import.meta.dirname, "../..");
const dists = {
  channels: join(plugins, "channels/dist/index.js"),
  gateway: join(plugins, "gateway/dist/index.js"),
  openai: join(plugins, "openai/dist/index.js"),
};

/** The provider plugin's built entry (`packages/plugins/<folder>/dist/index.js`). */
export const providerDist = (folder: string) => join(plugins, folder, "dist/index.js");

/** Whether the CLI and every plugin the test loads are built (the tests skip, saying so, when not). */
export function crashTestBuilt(provider: string): boolean {
  return [...Object.values(dists), provider].every((p) => existsSync(p)) && antlerCliBuilt();
}

/** Polls `probe` every 50 ms until it gives a value, or fails naming `what`. */
export async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export interface CrashFixture {
  /** The data and config folder both `antler serve` processes use. */
  readonly dir: string;
  /** Calls the model has had: the first never answers, the rest answer `Recovered answer to: <last 20 chars>`. */
  modelCalls(): number;
  /** Runs `antler channels connect <provider> --user alice` and returns the one-time code it printed. */
  connectCode(env: Record<string, string>): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Writes the config (`provider` with `providerConfig`, its lines indented under `config:`) and starts the model. */
export async function startCrashFixture(options: { provider: string; dist: string; providerConfig: string[] }): Promise<CrashFixture> {
  let calls = 0;
  const model = await startOpenAICompatibleServer({
    handler: (body) => {
      calls += 1;
      const last = body.messages.at(-1);
      const text = typeof last?.content === "string" ? last.content : "";
      // The first process never gets its answer: it is killed while it waits here.
      if (calls === 1) return { text: "never delivered", delayMs: 120_000 };
      return { text: `Recovered answer to: ${text.slice(-20)}` };
    },
  });
  const dir = mkdtempSync(join(tmpdir(), `antler-${options.provider}-crash-`));
  writeFileSync(
    join(dir, "config.yaml"),
    [
      ...loopbackModelConfig(model.url),
      "plugins:",
      `  - path: ${JSON.stringify(dists.openai)}`,
      `  - path: ${JSON.stringify(dists.gateway)}`,
      "    config:",
      "      auth:",
      "        api_keys:",
      "          - { key: alice-key-0123456789abcdef, user: alice }",
      `  - path: ${JSON.stringify(dists.channels)}`,
      "    config:",
      "      lease_seconds: 2",
      "      recovery_interval_seconds: 0.5",
      `  - path: ${JSON.stringify(options.dist)}`,
      "    config:",
      ...options.providerConfig.map((line) => `      ${line}`),
      "",
    ].join("\n"),
  );
  return {
    dir,
    modelCalls: () => calls,
    async connectCode(env) {
      const connect = await run(
        process.execPath,
        [antlerBinPath(), "channels", "connect", options.provider, "--user", "alice", "--config", "config.yaml"],
        { cwd: dir, env: { ...process.env, ANTLER_CONFIG: "", ...env } },
      );
      return /\/connect (\S+)/.exec(connect.stdout)?.[1];
    },
    async close() {
      await model.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
