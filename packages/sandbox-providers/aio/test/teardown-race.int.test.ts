import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AntlerDatabase, createKernel, type KernelConfigInput, silentLogger } from "@antler/kernel";
import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import postgres from "@antler/plugin-storage-postgres";
import sqlite from "@antler/plugin-storage-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { type AioSandboxProvider, createAioProvider, dockerNames, sandboxIdFor, TeardownLeases } from "../src/index.js";
import { FakeAioServer } from "./fake-aio-server.js";
import { standInDocker } from "./stand-in-docker.js";

type Storage = NonNullable<KernelConfigInput["storage"]>;

/** Opens the kernel's SQL store (both instances share one base_dir, so one SQLite file) the way the plugin does (`ctx.storage.openDatabase({ migrations })`). */
async function openStore(storage: Storage, baseDir: string): Promise<() => Promise<TeardownLeases>> {
  const kernel = await createKernel({
    config: { preset: "none", base_dir: baseDir, storage },
    plugins: [sqlite, postgres],
    discover: false,
    env: {},
    logger: silentLogger(),
  });
  return () => TeardownLeases.open((migrations): Promise<AntlerDatabase> => kernel.openDatabase({ migrations }));
}

function raceContract(setup: () => Promise<{ storage: Storage; dir: string }>) {
  let server: FakeAioServer | undefined;
  const providers: AioSandboxProvider[] = [];
  const dirs: string[] = [];

  afterEach(async () => {
    await Promise.all(providers.splice(0).map((p) => p.close().catch(() => undefined)));
    await server?.close();
    server = undefined;
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });

  /** Two provider instances (two gateways) on one database and one engine that holds a sandbox of another policy. */
  async function twoInstances(createdAt: number) {
    const { storage, dir } = await setup();
    dirs.push(dir);
    server = await FakeAioServer.start();
    const box = await server.addSandbox("race-box");
    server.serveAtRoot(box.id);
    const id = sandboxIdFor("u1", "t1");
    const docker = await standInDocker({
      aioUrl: server.url,
      // The found sandbox: restricted with policy "old", created at `createdAt`.
      psLines: [`deadbeef0001\t${id}\trestricted\told\t${createdAt}\tnonce1`],
    });
    dirs.push(docker.dir);
    for (const name of ["gateway-a", "gateway-b"]) {
      const leases = await openStore(storage, dir);
      const provider = createAioProvider(
        { backend: "docker", docker_command: docker.cli, container_root: box.home, orphan_grace_seconds: 60 },
        { teardownLeases: leases, instanceId: name },
      );
      providers.push(provider);
    }
    return { docker, id, names: dockerNames(id) };
  }

  it("a found sandbox of another policy is left alone by discovery and within the orphan grace", async () => {
    const { docker, names } = await twoInstances(Date.now() - 5_000);
    const [a] = providers as [AioSandboxProvider, AioSandboxProvider];
    expect((await a.enumerate()).map((s) => [s.policyLabel, s.networkMode])).toEqual([["old", "restricted"]]);
    await expect(a.acquire("t1", { userId: "u1" })).rejects.toMatchObject({ message: expect.stringMatching(/orphan grace of 60 s/) });
    const calls = await docker.calls();
    expect(calls.filter((c) => !c.startsWith("ps ") && !c.startsWith("info "))).toEqual([]);
    expect(calls).not.toContain(`rm -f ${names.sandbox}`);
  });

  it("two instances race to replace a mismatched sandbox after the grace: exactly one tears it down, and it alone creates the new one", async () => {
    const { docker, names } = await twoInstances(Date.now() - 120_000);
    const [a, b] = providers as [AioSandboxProvider, AioSandboxProvider];
    const results = await Promise.allSettled([a.acquire("t1", { userId: "u1" }), b.acquire("t1", { userId: "u1" })]);
    const calls = await docker.calls();
    expect(calls.filter((c) => c === `rm -f ${names.sandbox}`)).toHaveLength(1);
    expect(calls.filter((c) => c === `network rm ${names.internal}`)).toHaveLength(1);
    expect(calls.filter((c) => c === `network rm ${names.egress}`)).toHaveLength(1);
    expect(calls.filter((c) => c.startsWith(`run -d --rm --name ${names.sandbox} `))).toHaveLength(1);
    const fulfilled = results.filter((r) => r.status === "fulfilled");
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(fulfilled).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    expect(String(rejected[0]?.reason?.message)).toMatch(/another instance is tearing down|being torn down/);
  });
}

describe("teardown lease race on one SQLite file", () => {
  raceContract(async () => {
    const dir = await mkdtemp(join(tmpdir(), "antler-aio-race-"));
    return { dir, storage: { backend: "sqlite" } as Storage };
  });
});

describeWithPostgres("teardown lease race on one PostgreSQL database", (url) => {
  const schema = usePostgresSchema(url, { prefix: "aio_race" });
  raceContract(async () => ({
    dir: await mkdtemp(join(tmpdir(), "antler-aio-race-pg-")),
    storage: { backend: "postgres", postgres_url: url, postgres_schema: schema.name } as Storage,
  }));
});
