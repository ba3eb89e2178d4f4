import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { captureLogs, scriptedModelsPlugin } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import consolePlugin from "../src/index.js";
import { ALICE_KEY, ensureConsoleBuilt } from "./harness.js";

const MIB = 1024 * 1024;

/** The engine's collector, reachable without starting the worker with --expose-gc. */
function collector(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

describe("the console's /assets/ route under a flood of names that do not exist", () => {
  let gateway: RunningGateway;
  let close: () => Promise<void>;
  beforeAll(async () => {
    await ensureConsoleBuilt();
    const dir = mkdtempSync(join(tmpdir(), "antler-console-flood-"));
    const client = await AntlerClient.create({
      config: { base_dir: dir, models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
      plugins: [scriptedModelsPlugin({ m: [{ text: "hi" }] }), consolePlugin],
      cwd: dir,
      env: {},
      discover: false,
      logger: captureLogs({ level: "warn" }).logger,
    });
    gateway = await startGateway({
      client,
      config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: ALICE_KEY, user: "alice" }] } },
    });
    close = async () => {
      await gateway.close();
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    };
  }, 120_000);
  afterAll(() => close?.());

  /** GETs `count` random, well-formed asset names over 16 keep-alive connections; every answer must be a 404. */
  async function flood(count: number): Promise<void> {
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const { hostname, port } = new URL(gateway.url);
    let next = 0;
    const one = (path: string) =>
      new Promise<number>((resolve, reject) => {
        request({ agent, hostname, port, path }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        })
          .on("error", reject)
          .end();
      });
    const statuses = new Map<number, number>();
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < count) {
          next++;
          const status = await one(`/assets/${randomBytes(12).toString("hex")}-${randomBytes(4).toString("hex")}.js`);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    agent.destroy();
    expect(Object.fromEntries(statuses)).toEqual({ 404: count });
  }

  it("keeps memory flat over 100,000 random asset names: each is a 404 the server does not remember", async () => {
    const gc = collector();
    const settle = () => {
      for (let i = 0; i < 3; i++) gc();
      const m = process.memoryUsage();
      return { heap: m.heapUsed + m.external, rss: m.rss };
    };
    // Warm up: JIT, the agent's sockets and the server's per-connection buffers reach their steady size first.
    await flood(5_000);
    const before = settle();
    await flood(100_000);
    const after = settle();
    const grown = { heapMiB: (after.heap - before.heap) / MIB, rssMiB: (after.rss - before.rss) / MIB };
    expect(grown.heapMiB, JSON.stringify(grown)).toBeLessThan(16);
    expect(grown.rssMiB, JSON.stringify(grown)).toBeLessThan(16);

    // The built files are still served.
    const shell = await fetch(`${gateway.url}/`);
    const script = /src="(\/assets\/[^"]+)"/.exec(await shell.text())?.[1];
    expect(script).toBeDefined();
    expect((await fetch(`${gateway.url}${script}`)).status).toBe(200);
  });
});
