import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { chmod, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
/** The built sidecar entry; the stand-in CLI starts it as a real process for `docker run <sidecar image>`. */
export const SIDECAR_MAIN = resolve(here, "../dist/sidecar/main.js");

/**
 * Brings `dist/` up to date (`tsc -b` of this package: a no-op when it is; a build when the
 * sidecar is missing or older than its source), so the suites that start the real sidecar never skip or run stale
 * code. A failed build throws with the compiler's output.
 */
export function buildSidecar(): void {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const pkg = resolve(here, "..");
  // The build info alone makes `tsc -b` skip emitting: without the sidecar it must go, so the package emits again.
  if (!existsSync(SIDECAR_MAIN)) rmSync(resolve(pkg, "dist", ".tsbuildinfo"), { force: true });
  const out = spawnSync(process.execPath, [tsc, "-b", pkg], { encoding: "utf8" });
  if (out.status !== 0 || !existsSync(SIDECAR_MAIN)) {
    throw new Error(`building the sidecar (tsc -b ${pkg}) failed, exit ${out.status}:\n${out.stdout}${out.stderr}`);
  }
}

export interface StandInOptions {
  /** Where the sandbox's AIO API really answers (the stand-in maps the container URL onto it). */
  aioUrl: string;
  /** `docker ps` output lines to print (discovery), or none. */
  psLines?: string[];
  /** Commands (prefix match) that fail, with this stderr. */
  failing?: Record<string, string>;
  sidecarImage?: string;
}

/**
 * A stand-in for the docker CLI (no engine here): a Node script that logs each command line, plays `docker run`
 * of the sidecar image by starting the real sidecar program on loopback (with the environment `-e NAME` passes
 * through, as docker would), answers `docker port` from what it started, and stops it on `docker rm -f`.
 */
export async function standInDocker(options: StandInOptions) {
  const dir = await mkdtemp(join(tmpdir(), "antler-standin-docker-"));
  const log = join(dir, "calls.log");
  const state = join(dir, "state.json");
  await writeFile(state, JSON.stringify({ ps: options.psLines ?? [], failing: options.failing ?? {}, containers: {} }));
  const cli = join(dir, "docker");
  const script = `#!${process.execPath}
const fs = require("node:fs");
const { spawn } = require("node:child_process");
const args = process.argv.slice(2);
const line = args.join(" ");
fs.appendFileSync(${JSON.stringify(log)}, line + "\\n");
const st = JSON.parse(fs.readFileSync(${JSON.stringify(state)}, "utf8"));
const save = () => fs.writeFileSync(${JSON.stringify(state)}, JSON.stringify(st));
for (const [prefix, stderr] of Object.entries(st.failing)) {
  if (line.startsWith(prefix)) { process.stderr.write(stderr + "\\n"); process.exit(1); }
}
const value = (flag) => { const i = args.indexOf(flag); return i >= 0 ? args[i + 1] : undefined; };
switch (args[0]) {
  case "info": console.log("28.0.0"); break;
  case "ps": for (const l of st.ps) console.log(l); break;
  case "network": console.log(args[1] === "create" ? "net-" + args.at(-1) : ""); break;
  case "run": {
    const name = value("--name");
    const image = args.at(-1);
    if (image === ${JSON.stringify(options.sidecarImage ?? "antler/aio-sidecar:0.1.0")}) {
      const env = { ANTLER_SIDECAR_HOST: "127.0.0.1", ANTLER_PROXY_PORT: "0", ANTLER_RELAY_PORT: "0", PATH: process.env.PATH };
      args.forEach((a, i) => {
        if (args[i - 1] !== "-e") return;
        const eq = a.indexOf("=");
        if (eq < 0) env[a] = process.env[a] ?? "";
        else env[a.slice(0, eq)] = a.slice(eq + 1);
      });
      env.ANTLER_RELAY_UPSTREAM = ${JSON.stringify(options.aioUrl)};
      const out = fs.openSync(${JSON.stringify(join(dir, "sidecar.out"))}, "w");
      const child = spawn(process.execPath, [${JSON.stringify(SIDECAR_MAIN)}], { env, detached: true, stdio: ["ignore", out, out] });
      child.unref();
      const deadline = Date.now() + 10000;
      const wait = () => {
        const text = fs.readFileSync(${JSON.stringify(join(dir, "sidecar.out"))}, "utf8");
        const ready = text.split("\\n").filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.event === "sidecar_ready");
        if (ready) {
          st.containers[name] = { pid: child.pid, relayPort: ready.relay_port, proxyPort: ready.proxy_port, tokenSeen: env.ANTLER_RELAY_TOKEN !== undefined && env.ANTLER_RELAY_TOKEN !== "" };
          save();
          console.log("sidecar-" + child.pid);
          return;
        }
        if (Date.now() > deadline) { process.stderr.write("sidecar did not start: " + text + "\\n"); process.exit(1); }
        setTimeout(wait, 20);
      };
      wait();
    } else {
      st.containers[name] = { env: args.filter((a, i) => args[i - 1] === "-e") };
      save();
      console.log("0123456789abcdef0123");
    }
    break;
  }
  case "port": {
    const c = st.containers[args[1]];
    if (c && c.relayPort) console.log("127.0.0.1:" + c.relayPort);
    else console.log(${JSON.stringify(`127.0.0.1:${new URL(options.aioUrl).port}`)});
    break;
  }
  case "rm": {
    const c = st.containers[args.at(-1)];
    if (c && c.pid) { try { process.kill(c.pid); } catch {} }
    delete st.containers[args.at(-1)];
    save();
    break;
  }
  default: process.stderr.write("unknown command\\n"); process.exit(1);
}
`;
  await writeFile(cli, script);
  await chmod(cli, 0o755);
  return {
    cli,
    dir,
    calls: async () => (await readFile(log, "utf8")).trim().split("\n"),
    state: async () =>
      JSON.parse(await readFile(state, "utf8")) as {
        containers: Record<string, { pid?: number; relayPort?: number; proxyPort?: number; tokenSeen?: boolean; env?: string[] }>;
      },
    setFailing: async (failing: Record<string, string>) => {
      const st = JSON.parse(await readFile(state, "utf8"));
      st.failing = failing;
      await writeFile(state, JSON.stringify(st));
    },
  };
}
