import { rm } from "node:fs/promises";
import { connect } from "node:net";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AioSandboxProvider, createAioProvider, dockerNames, sandboxIdFor } from "../src/index.js";
import { FakeAioServer } from "./fake-aio-server.js";
import { buildSidecar, standInDocker } from "./stand-in-docker.js";

const policy = { label: "research", allow: ["pypi.org"], deny: [], ports: [443, 80] };

function proxyGet(port: number, host: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let out = "";
    socket.on("data", (c: Buffer) => {
      out += c.toString();
    });
    socket.on("close", () => resolve(out));
    socket.on("error", () => resolve(out));
    socket.write(`GET http://${host}/ HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
  });
}

describe("restricted AIO sandbox through the stand-in docker CLI and the real sidecar (built first when dist/ is missing or stale)", () => {
  beforeAll(() => buildSidecar(), 300_000);

  let server: FakeAioServer | undefined;
  let provider: AioSandboxProvider | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await provider?.close().catch(() => undefined);
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    provider = server = dir = undefined;
  });

  it("logs one restricted sandbox's life: networks, sandbox, sidecar, relay port, use through the relay, then teardown of all four", async () => {
    server = await FakeAioServer.start();
    const box = await server.addSandbox("restricted-box");
    server.serveAtRoot(box.id);
    const docker = await standInDocker({ aioUrl: server.url });
    dir = docker.dir;
    provider = createAioProvider({
      backend: "docker",
      docker_command: docker.cli,
      image: "example/aio:1.2",
      container_root: box.home,
      network: { mode: "restricted", policy },
    });

    // Create
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    // Use: the provider's API calls go through the relay (the only published port)
    expect((await sandbox.executeCommand("echo through-the-relay")).stdout.trim()).toBe("through-the-relay");
    // Use: the sandbox's egress goes through the proxy; a refused name becomes a denial the provider can claim
    const st = await docker.state();
    const names = dockerNames(sandboxIdFor("u1", "t1"));
    const sidecar = st.containers[names.sidecar];
    expect(sidecar?.tokenSeen).toBe(true);
    expect(await proxyGet(sidecar?.proxyPort ?? 0, "blocked.example")).toMatch(/^HTTP\/1\.1 403/);
    expect(await sandbox.egress?.claimOldestDenial()).toMatchObject({ host: "blocked.example", port: 80, kind: "policy" });
    // Teardown
    await provider.close();
    provider = undefined;

    const calls = await docker.calls();
    const id = sandboxIdFor("u1", "t1");
    const policyJson = JSON.stringify({ ...policy, allow_private_cidrs: [] });
    expect(calls).toEqual([
      "info --format {{.ServerVersion}}",
      `ps -a --filter label=antler.sandbox=aio --filter label=antler.role=sandbox --filter label=antler.sandbox_id=${id} --format {{.ID}}\t{{.Label "antler.sandbox_id"}}\t{{.Label "antler.network_mode"}}\t{{.Label "antler.policy_label"}}\t{{.Label "antler.created_at"}}\t{{.Label "antler.relay_nonce"}}`,
      `network create --internal --label antler.sandbox=aio --label antler.sandbox_id=${id} ${names.internal}`,
      `network create --opt com.docker.network.bridge.enable_icc=false --label antler.sandbox=aio --label antler.sandbox_id=${id} ${names.egress}`,
      expect.stringMatching(
        new RegExp(
          `^run -d --rm --name ${names.sandbox} --network ${names.internal} --security-opt seccomp=unconfined .*--label antler.network_mode=restricted --label antler.policy_label=research .*-e HTTP_PROXY=http://${names.sidecar}:3128 .*example/aio:1\\.2$`,
        ),
      ),
      `run -d --rm --name ${names.sidecar} --network ${names.egress} -p 127.0.0.1::8081 --label antler.sandbox=aio --label antler.sandbox_id=${id} --label antler.role=sidecar -e ANTLER_RELAY_TOKEN -e ANTLER_RELAY_UPSTREAM=http://${names.sandbox}:8080 -e ANTLER_EGRESS_POLICY=${policyJson} antler/aio-sidecar:0.1.0`,
      `network connect ${names.internal} ${names.sidecar}`,
      `port ${names.sidecar} 8081/tcp`,
      `rm -f ${names.sandbox}`,
      `rm -f ${names.sidecar}`,
      `network rm ${names.internal}`,
      `network rm ${names.egress}`,
    ]);
    // The sandbox container got no token and publishes no port; the token is on no command line.
    const sandboxRun = calls.find((c) => c.startsWith(`run -d --rm --name ${names.sandbox} `)) ?? "";
    expect(sandboxRun).not.toMatch(/ANTLER_RELAY_TOKEN| -p /);
    expect(calls.join("\n")).not.toMatch(/[0-9a-f]{64}/);
    console.log(["stand-in docker CLI log of one restricted sandbox:", ...calls.map((c) => `  docker ${c}`)].join("\n"));
  });

  it("a teardown that fails midway names what is left and the next sweep finishes it", async () => {
    server = await FakeAioServer.start();
    const box = await server.addSandbox("restricted-box-2");
    server.serveAtRoot(box.id);
    const docker = await standInDocker({ aioUrl: server.url });
    dir = docker.dir;
    const warnings: string[] = [];
    provider = createAioProvider(
      { backend: "docker", docker_command: docker.cli, container_root: box.home, network: { mode: "restricted", policy }, replicas: 0 },
      { logger: { warn: (_o, msg) => warnings.push(msg ?? "") } },
    );
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    const names = dockerNames(sandboxIdFor("u1", "t1"));
    await docker.setFailing({
      [`network rm ${names.egress}`]: "Error response from daemon: error while removing network: has active endpoints",
    });
    await expect(provider.release(sandbox.id)).rejects.toThrow(new RegExp(`left network ${names.egress}`));
    expect(provider.unfinished()).toEqual([sandboxIdFor("u1", "t1")]);
    await docker.setFailing({});
    await provider.sweep();
    expect(provider.unfinished()).toEqual([]);
    const calls = await docker.calls();
    expect(calls.filter((c) => c === `network rm ${names.egress}`)).toHaveLength(2);
  });
});
