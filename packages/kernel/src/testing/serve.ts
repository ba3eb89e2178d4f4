import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** The kernel package's folder, found by its own name so it is right from src/ (tests) and from dist/bundle/. */
function kernelRoot(): string {
  return dirname(createRequire(import.meta.url).resolve("@antler/kernel/package.json"));
}

/** The path of the `antler` binary (`bin/antler.js` of `@antler/kernel`), to run with `process.execPath`. */
export function antlerBinPath(): string {
  return join(kernelRoot(), "bin/antler.js");
}

/** Whether the compiled CLI exists (the bin loads `dist/bundle/cli.js`): tests of a child-process CLI skip without it. */
export function antlerCliBuilt(): boolean {
  return existsSync(join(kernelRoot(), "dist/bundle/cli.js"));
}

export interface AntlerServeOptions {
  /** The folder the process runs in; `config` is resolved against it. */
  cwd: string;
  /** The config file, absolute or relative to `cwd`; default `config.yaml`. */
  config?: string;
  /** Variables added to this process's environment (`ANTLER_CONFIG` is cleared unless given here). */
  env?: Readonly<Record<string, string>>;
  /** More arguments after `serve --config <file> --port 0`. */
  args?: readonly string[];
  /** How long to wait for the listening line; default 60 s. */
  timeoutMs?: number;
}

export interface AntlerServe {
  /** The URL from the "gateway listening on <url>" line. */
  url: string;
  child: ChildProcess;
  /** Everything the process wrote so far (stdout and stderr interleaved), growing until it exits. */
  readonly output: string;
  /** Sends SIGTERM (if still running) and resolves with the exit code once it has exited. */
  stop(): Promise<number | null>;
}

/**
 * The config lines a served distribution in a test usually starts with: SQLite storage, titles off, and one model
 * `loopback` (provider `openai`) on the OpenAI-compatible server at `modelUrl` (see `startOpenAICompatibleServer`).
 */
export function loopbackModelConfig(modelUrl: string): string[] {
  return [
    "storage:",
    "  backend: sqlite",
    "title:",
    "  enabled: false",
    "models:",
    "  - name: loopback",
    "    provider: openai",
    "    model: scripted-model",
    `    base_url: ${modelUrl}`,
    "    api_key: test-key",
  ];
}

const LISTENING = /gateway listening on (http:\/\/127\.0\.0\.1:\d+)/;

/**
 * Starts `antler serve --config <config> --port 0` (the compiled CLI) as a child process and resolves once it logs
 * "gateway listening on <url>". It writes no files: the test writes the config into `cwd` first. Rejects with the
 * output so far when the process exits first or the line does not come within `timeoutMs` (the process is then killed).
 */
export async function startAntlerServe(options: AntlerServeOptions): Promise<AntlerServe> {
  const config = options.config ?? "config.yaml";
  const child = spawn(process.execPath, [antlerBinPath(), "serve", "--config", config, "--port", "0", ...(options.args ?? [])], {
    cwd: options.cwd,
    env: { ...process.env, ANTLER_CONFIG: "", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`antler serve did not log "gateway listening on <url>" within ${timeoutMs} ms; output so far:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = LISTENING.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`antler serve exited (code ${code}) before listening; output:\n${output}`));
    });
  });
  return {
    url,
    child,
    get output() {
      return output;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}
