import { existsSync } from "node:fs";
import { join } from "node:path";
import { ErrorCodes, ensureTraceContext } from "@antler/kernel";
import { afterEach, describe, expect, it } from "vitest";
import aioSandboxPlugin, { type AioConfigInput, type AioSandboxProvider, createAioProvider, sandboxIdFor } from "../src/index.js";
import { FakeAioServer } from "./fake-aio-server.js";

let server: FakeAioServer | undefined;
let provider: AioSandboxProvider | undefined;

async function setup(
  config: Omit<AioConfigInput, "provisioner_url"> = {},
  serverOptions = {},
): Promise<{ server: FakeAioServer; provider: AioSandboxProvider }> {
  server = await FakeAioServer.start(serverOptions);
  provider = createAioProvider({ provisioner_url: server.url, acquire_timeout_seconds: 10, ...config }, { pollIntervalMs: 20 });
  return { server, provider };
}

const creates = (s: FakeAioServer) => s.count("POST", /^\/api\/sandboxes$/);
const deletes = (s: FakeAioServer) => s.count("DELETE", /^\/api\/sandboxes\//);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `probe` holds; fails after `ms` (generous: a slow machine only costs time here). */
async function until(probe: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

afterEach(async () => {
  await provider?.close();
  await server?.close();
  provider = undefined;
  server = undefined;
});

describe("leases", () => {
  it("the same (user, thread) reuses one sandbox; concurrent acquires share one creation", async () => {
    const { server, provider } = await setup();
    const [a, b] = await Promise.all([provider.acquire("t1", { userId: "u1" }), provider.acquire("t1", { userId: "u1" })]);
    const c = await provider.acquire("t1", { userId: "u1" });
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(a.id).toBe(`aio:${sandboxIdFor("u1", "t1")}`);
    expect(creates(server)).toBe(1);
  });

  it("two threads get different sandboxes with separate files", async () => {
    const { server, provider } = await setup();
    const one = await provider.acquire("t1", { userId: "u1" });
    const two = await provider.acquire("t2", { userId: "u1" });
    expect(two.id).not.toBe(one.id);
    expect(server.liveSandboxes()).toHaveLength(2);
    await one.writeFile("/mnt/user-data/workspace/secret.txt", "one");
    await expect(two.readFile("/mnt/user-data/workspace/secret.txt")).rejects.toThrow(/secret\.txt/);
  });

  it("a warm sandbox is never handed to another thread or user", async () => {
    const { server, provider } = await setup({ replicas: 3 });
    const owner = await provider.acquire("t1", { userId: "u1" });
    await provider.release(owner.id);
    const otherThread = await provider.acquire("t2", { userId: "u1" });
    const otherUser = await provider.acquire("t1", { userId: "u2" });
    expect(otherThread.id).not.toBe(owner.id);
    expect(otherUser.id).not.toBe(owner.id);
    expect(creates(server)).toBe(3);
    expect(provider.stats()).toEqual({ active: 2, warm: 1 });
  });

  it("refuses ids that are not safe folder names", async () => {
    const { provider } = await setup();
    await expect(provider.acquire("../t", { userId: "u1" })).rejects.toMatchObject({ code: ErrorCodes.PATH_UNSAFE });
    await expect(provider.acquire("t1", { userId: "u/1" })).rejects.toMatchObject({ code: ErrorCodes.PATH_UNSAFE });
  });
});

describe("warm pool", () => {
  it("release parks the sandbox warm and the next acquire of the lease reuses it without a new container", async () => {
    const { server, provider } = await setup({ idle_timeout_seconds: 60 });
    const first = await provider.acquire("t1", { userId: "u1" });
    await first.writeFile("/mnt/user-data/workspace/keep.txt", "kept");
    await provider.release(first.id);
    expect(provider.stats()).toEqual({ active: 0, warm: 1 });
    expect(provider.get(first.id)).toBe(first);
    const again = await provider.acquire("t1", { userId: "u1" });
    expect(again).toBe(first);
    expect(await again.readFile("/mnt/user-data/workspace/keep.txt")).toBe("kept");
    expect(creates(server)).toBe(1);
    expect(deletes(server)).toBe(0);
  });

  it("an idle warm sandbox is destroyed after idle_timeout_seconds", async () => {
    const { server, provider } = await setup({ idle_timeout_seconds: 0.15 });
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    await provider.release(sandbox.id);
    await sleep(50);
    expect(provider.get(sandbox.id)).toBe(sandbox);
    // The reaper deletes the container over HTTP; wait until the fake has finished deleting it (its folder is
    // gone) rather than for a fixed time.
    const folder = join(server.root, sandboxIdFor("u1", "t1"));
    await until(
      () => provider.get(sandbox.id) === undefined && server.liveSandboxes().length === 0 && !existsSync(folder),
      "the idle sandbox to be destroyed",
    );
    expect(provider.get(sandbox.id)).toBeUndefined();
    expect(deletes(server)).toBe(1);
    expect(server.liveSandboxes()).toEqual([]);
    const fresh = await provider.acquire("t1", { userId: "u1" });
    expect(fresh.id).toBe(sandbox.id);
    expect(fresh).not.toBe(sandbox);
    expect(creates(server)).toBe(2);
  });

  it("acquiring a thread again while its old sandbox is still being deleted gets a new sandbox that survives the delete", async () => {
    const { server, provider } = await setup({ replicas: 0 });
    const old = await provider.acquire("t1", { userId: "u1" });
    const letDeletesThrough = server.holdDeletes();
    const releasing = provider.release(old.id);
    await until(() => deletes(server) === 1, "the DELETE to reach the provisioner");
    const again = provider.acquire("t1", { userId: "u1" });
    letDeletesThrough();
    await releasing;
    const fresh = await again;
    expect(fresh).not.toBe(old);
    expect(server.liveSandboxes()).toEqual([sandboxIdFor("u1", "t1")]);
    expect((await fresh.executeCommand("echo alive")).stdout.trim()).toBe("alive");
  });

  it("an active sandbox is not reaped", async () => {
    const { server, provider } = await setup({ idle_timeout_seconds: 0.05 });
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    await sleep(200);
    expect(provider.get(sandbox.id)).toBe(sandbox);
    expect(deletes(server)).toBe(0);
  });

  it("keeps at most `replicas` warm, destroying the least recently released", async () => {
    const { server, provider } = await setup({ replicas: 1 });
    const a = await provider.acquire("ta", { userId: "u1" });
    const b = await provider.acquire("tb", { userId: "u1" });
    await provider.release(a.id);
    await provider.release(b.id);
    expect(provider.get(a.id)).toBeUndefined();
    expect(provider.get(b.id)).toBe(b);
    expect(deletes(server)).toBe(1);
    expect(server.liveSandboxes()).toEqual([sandboxIdFor("u1", "tb")]);
  });

  it("replicas: 0 destroys on release", async () => {
    const { server, provider } = await setup({ replicas: 0 });
    const a = await provider.acquire("t1", { userId: "u1" });
    await provider.release(a.id);
    expect(provider.get(a.id)).toBeUndefined();
    expect(server.liveSandboxes()).toEqual([]);
  });

  it("a warm sandbox that died while parked is replaced on acquire", async () => {
    const { server, provider } = await setup();
    const a = await provider.acquire("t1", { userId: "u1" });
    await provider.release(a.id);
    await fetch(`${server.url}/api/sandboxes/${sandboxIdFor("u1", "t1")}`, { method: "DELETE" });
    const b = await provider.acquire("t1", { userId: "u1" });
    expect(b).not.toBe(a);
    expect((await b.executeCommand("echo alive")).stdout.trim()).toBe("alive");
    expect(creates(server)).toBe(2);
  });

  it("close destroys every container, warm or active, and refuses further acquires", async () => {
    const { server, provider } = await setup();
    const a = await provider.acquire("t1", { userId: "u1" });
    await provider.acquire("t2", { userId: "u1" });
    await provider.release(a.id);
    await provider.close();
    expect(server.liveSandboxes()).toEqual([]);
    await expect(provider.acquire("t1", { userId: "u1" })).rejects.toMatchObject({ code: ErrorCodes.SANDBOX_UNAVAILABLE });
  });
});

describe("provisioner backend", () => {
  it("polls a Pending sandbox until it runs", async () => {
    const { server, provider } = await setup({}, { pendingPolls: 3 });
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    expect((await sandbox.executeCommand("echo up")).stdout).toBe("up\n");
    // Three answers of Pending, then the one that reports Running.
    expect(server.count("GET", /^\/api\/sandboxes\//)).toBe(4);
  });

  it("gives up after acquire_timeout_seconds with SANDBOX_UNAVAILABLE and cleans up", async () => {
    const { server, provider } = await setup({ acquire_timeout_seconds: 0.3 }, { pendingPolls: 1_000_000 });
    const err = await provider.acquire("t1", { userId: "u1" }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: ErrorCodes.SANDBOX_UNAVAILABLE });
    expect(String((err as Error).message)).toContain("not ready within 0.3 s");
    expect(server.liveSandboxes()).toEqual([sandboxIdFor("u1", "t1")]);
  });

  it("sends thread, user and the deterministic sandbox id, and the ambient trace id on every request", async () => {
    const { server, provider } = await setup({ provisioner_api_key: "k" }, { provisionerApiKey: "k" });
    await ensureTraceContext("trace-acquire-1", async () => {
      const sandbox = await provider.acquire("t1", { userId: "u1" });
      await sandbox.executeCommand("true");
      await sandbox.writeFile("/mnt/user-data/outputs/a.txt", "a");
    });
    const create = server.requests.find((r) => r.method === "POST" && r.path === "/api/sandboxes");
    expect(create?.body).toMatchObject({ thread_id: "t1", user_id: "u1", sandbox_id: sandboxIdFor("u1", "t1") });
    expect(create?.authorization).toBe("Bearer k");
    expect(server.requests.length).toBeGreaterThan(5);
    expect(server.requests.map((r) => r.traceId)).toEqual(server.requests.map(() => "trace-acquire-1"));
  });
});

describe("plugin", () => {
  it("declares the aio provider and validates its config", () => {
    expect(aioSandboxPlugin.name).toBe("@antler/sandbox-aio");
    const schema = aioSandboxPlugin.configSchema;
    expect(schema?.parse({})).toMatchObject({ replicas: 3, idle_timeout_seconds: 600, image: "ghcr.io/agent-infra/sandbox:latest" });
    expect(schema?.safeParse({ backend: "provisioner" }).success).toBe(false);
    expect(schema?.safeParse({ replica: 2 }).success).toBe(false);
  });

  it("picks the provisioner backend when provisioner_url is set, else docker", () => {
    const remote = createAioProvider({ provisioner_url: "http://127.0.0.1:9" });
    const local = createAioProvider({});
    expect(remote.backend.kind).toBe("provisioner");
    expect(local.backend.kind).toBe("docker");
    expect(local).toMatchObject({ id: "aio", isolated: true });
  });

  it("reports invalid config as CONFIG_INVALID with the config path", () => {
    expect(() => createAioProvider({ backend: "provisioner" })).toThrow(/provisioner_url/);
  });
});
