import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { afterEach, describe, expect, it } from "vitest";
import schedulerPlugin, { Scheduler, schedulerConfigSchema } from "../src/index.js";
import { clock, tempDir } from "./helpers.js";

// Issue 26, G10: instance names are `<hostname>:<pid>:<random>` by default, the deployment's own host names and
// process ids. A run taken over from a crashed instance once carried that name in its error text over HTTP.

const KEY = "alice-key-0123456789abcdef";
const CRASHED = "web-7.internal:4242:deadbeef";
const SURVIVOR = "web-8.internal:5151:cafef00d";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe("scheduled runs over HTTP", () => {
  it("never name an instance: neither a taken-over run's error, the task's last error, nor any run field", async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const client = await AntlerClient.create({
      plugins: [scriptedModelsPlugin({ scripted: [{ text: "done" }] }), { plugin: schedulerPlugin, config: { run_in_gateway: false } }],
      config: {
        base_dir: dir.path,
        models: [{ name: "scripted", provider: "scripted" }],
        title: { enabled: false },
        logging: { level: "warn" },
      },
      cwd: dir.path,
      env: {},
      discover: false,
    });
    cleanups.push(() => client.close());
    const gateway: RunningGateway = await startGateway({
      client,
      config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: KEY, user: "alice" }] } },
      shutdownGraceMs: 500,
    });
    cleanups.push(() => gateway.close());

    // Two instances on the gateway's database: one claims the occurrence and dies mid-run (its runner never ends
    // and it renews nothing once its clock stops), the other takes it over after the lease.
    const c = clock(new Date("2026-06-01T10:00:00Z"));
    const config = schedulerConfigSchema.parse({ lease_seconds: 30, shutdown_grace_seconds: 0, max_attempts: 2 });
    const instance = (instanceId: string, runner: () => Promise<Record<string, never>>) =>
      new Scheduler({ kernel: client.kernel, config, instanceId, runner, now: () => c.now });
    const crashed = instance(CRASHED, () => new Promise(() => {}));
    const survivor = instance(SURVIVOR, () => new Promise(() => {}));
    cleanups.push(() => crashed.close());
    cleanups.push(() => survivor.close());
    const task = await crashed.add("alice", { prompt: "nightly", at: "2026-06-01T10:00:10Z" });
    c.advance(10_000);
    expect((await crashed.pollOnce()).claimed).toHaveLength(1);
    c.advance(31_000);
    expect((await survivor.pollOnce()).takenOver).toHaveLength(1);
    // The survivor dies too: with max_attempts 2 the occurrence is given up, and the task records why.
    c.advance(31_000);
    await crashed.pollOnce();

    const get = async (path: string) => {
      const res = await fetch(`${gateway.url}/api${path}`, { headers: { authorization: `Bearer ${KEY}` } });
      expect(res.status).toBe(200);
      return (await res.json()) as Record<string, unknown>;
    };
    const runs = (await get(`/scheduled-tasks/${task.id}/runs`)).runs as Array<Record<string, unknown>>;
    const shown = await get(`/scheduled-tasks/${task.id}`);
    expect(runs.map((r) => r.status)).toEqual(["failed", "interrupted"]);
    expect(String(runs[1]?.error)).toMatch(/stopped renewing its lease/);
    expect(String(shown.last_error)).toMatch(/gave up after 2 interrupted attempt/);
    const text = JSON.stringify({ runs, shown });
    for (const part of ["web-7", "web-8", "4242", "5151", "deadbeef", "cafef00d"]) expect(text).not.toContain(part);
    for (const run of runs) expect(Object.keys(run)).not.toContain("instance_id");
  });
});
