import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorCodes, threadPaths } from "@antler/kernel";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import {
  type AioSandboxProvider,
  createAioProvider,
  DockerBackend,
  mountFlags,
  parseHostPort,
  sandboxIdFor,
  threadMounts,
} from "../src/index.js";
import { FakeAioServer } from "./fake-aio-server.js";

async function engineAnswers(): Promise<boolean> {
  const result = await execa("docker", ["info", "--format", "{{.ServerVersion}}"], { reject: false, timeout: 20_000 });
  return !result.failed && result.exitCode === 0;
}

describe("docker backend without an engine", () => {
  let provider: AioSandboxProvider | undefined;

  afterEach(async () => {
    await provider?.close();
    provider = undefined;
  });

  it("acquire fails with SANDBOX_UNAVAILABLE that says so and points at provisioner_url", async (ctx) => {
    // The real `docker` CLI on this host: it must fail because no engine answers, not be mocked.
    if (await engineAnswers()) ctx.skip();
    provider = createAioProvider({ acquire_timeout_seconds: 30 });
    expect(provider.backend.kind).toBe("docker");
    const err = (await provider.acquire("t1", { userId: "u1" }).catch((e: unknown) => e)) as Error & { code: string; hint: string };
    expect(err.code).toBe(ErrorCodes.SANDBOX_UNAVAILABLE);
    expect(err.message).toMatch(/no Docker engine is available/);
    expect(err.message).toMatch(/`docker info` failed/);
    expect(err.hint).toContain("provisioner_url");
    expect(provider.stats()).toEqual({ active: 0, warm: 0 });
  });

  it("a missing docker CLI is the same SANDBOX_UNAVAILABLE error", async () => {
    const backend = new DockerBackend({ command: "/nonexistent/antler-no-docker" });
    await expect(backend.ensureEngine()).rejects.toMatchObject({
      code: ErrorCodes.SANDBOX_UNAVAILABLE,
      message: expect.stringMatching(/provisioner_url/),
    });
  });
});

describe("docker backend CLI protocol", () => {
  let dir: string | undefined;
  let server: FakeAioServer | undefined;
  let provider: AioSandboxProvider | undefined;

  afterEach(async () => {
    await provider?.close();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    provider = undefined;
    server = undefined;
    dir = undefined;
  });

  /**
   * A fake AIO server whose sandbox plays the container, and a stand-in CLI that speaks just enough of docker's
   * command line to start it; a bind mount (`-v host:target[:ro]`) is played by a symlink at the target (a
   * symlink cannot be read-only: that `:ro` is asked for is checked on the arguments).
   */
  async function standInDocker(boxId: string) {
    server = await FakeAioServer.start();
    const box = await server.addSandbox(boxId);
    server.serveAtRoot(box.id);
    dir = await mkdtemp(join(tmpdir(), "antler-fake-docker-"));
    const log = join(dir, "calls.log");
    const cli = join(dir, "docker");
    await writeFile(
      cli,
      [
        "#!/bin/bash",
        `echo "$*" >> '${log}'`,
        'case "$1" in',
        "  info) echo 28.0.0 ;;",
        '  run) while [ $# -gt 0 ]; do if [ "$1" = "-v" ]; then t="${2#*:}"; ln -s "${2%%:*}" "${t%:ro}"; shift; fi; shift; done; echo 0123456789abcdef0123 ;;',
        `  port) echo '127.0.0.1:${new URL(server.url).port}' ;;`,
        "  rm) exit 0 ;;",
        "  ps) exit 0 ;;",
        "  *) echo unknown >&2; exit 1 ;;",
        "esac",
        "",
      ].join("\n"),
    );
    await chmod(cli, 0o755);
    return { box, cli, dir, calls: async () => (await readFile(log, "utf8")).trim().split("\n") };
  }

  it("runs the image on a loopback port, finds the port, and removes the container on close", async () => {
    const { cli, calls: callLog } = await standInDocker("docker-box");
    provider = createAioProvider({ backend: "docker", docker_command: cli, image: "example/aio:1.2", docker_run_args: ["--memory=1g"] });
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    expect((await sandbox.executeCommand("pwd")).stdout.trim()).toBe("/mnt/user-data/workspace");
    await provider.close();
    const calls = await callLog();
    const name = `antler-aio-${sandboxIdFor("u1", "t1")}`;
    expect(calls[0]).toBe("info --format {{.ServerVersion}}");
    // Discovery is a read-only `docker ps`; nothing is removed before the run (no sandbox was found).
    expect(calls[1]).toMatch(
      new RegExp(
        `^ps -a --filter label=antler.sandbox=aio --filter label=antler.role=sandbox --filter label=antler.sandbox_id=${sandboxIdFor("u1", "t1")} `,
      ),
    );
    expect(calls[2]).toMatch(new RegExp(`^run -d --rm --name ${name} .*-p 127\\.0\\.0\\.1::8080 .*--memory=1g example/aio:1\\.2$`));
    expect(calls[2]).toContain("--label antler.network_mode=open --label antler.policy_label=open");
    // No data folder given (code use without a kernel): nothing is mounted.
    expect(calls[2]).not.toContain(" -v ");
    expect(calls[3]).toBe("port 0123456789abcdef0123 8080/tcp");
    expect(calls.at(-1)).toBe("rm -f 0123456789abcdef0123");
  });

  it("mounts the thread's host user-data, so a file the agent writes to outputs lands in the thread's host folder", async () => {
    const { box, cli, dir: root, calls: callLog } = await standInDocker("docker-mount-box");
    const baseDir = join(root, "antler-data");
    provider = createAioProvider({ backend: "docker", docker_command: cli, container_root: box.home }, { baseDir });
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    await sandbox.writeFile("/mnt/user-data/outputs/report.md", "# Findings\n");
    const host = threadPaths(baseDir, "u1", "t1");
    expect(await readFile(join(host.outputs, "report.md"), "utf8")).toBe("# Findings\n");
    const calls = await callLog();
    expect(calls.find((c) => c.startsWith("run "))).toContain(`-v ${host.userData}:${box.home}/user-data `);
  });

  it("mounts the thread's ACP workspace read-only at /mnt/acp-workspace, so the agent reads what an ACP agent left", async () => {
    const { box, cli, dir: root, calls: callLog } = await standInDocker("docker-acp-box");
    const baseDir = join(root, "antler-data");
    const host = threadPaths(baseDir, "u1", "t1");
    await mkdir(join(host.threadDir, "acp-workspace"), { recursive: true });
    await writeFile(join(host.threadDir, "acp-workspace", "notes.md"), "left by the ACP agent\n");
    provider = createAioProvider({ backend: "docker", docker_command: cli, container_root: box.home }, { baseDir });

    const sandbox = await provider.acquire("t1", { userId: "u1" });

    expect(await sandbox.readFile("/mnt/acp-workspace/notes.md")).toBe("left by the ACP agent\n");
    const run = (await callLog()).find((c) => c.startsWith("run ")) ?? "";
    expect(run).toContain(`-v ${join(host.threadDir, "acp-workspace")}:${box.home}/acp-workspace:ro `);
    await expect(sandbox.writeFile("/mnt/acp-workspace/x.md", "x")).rejects.toMatchObject({ code: ErrorCodes.SANDBOX_PATH_READ_ONLY });
    // Mounted folders are the host's own: no generation, so nothing about them waits on a sync.
    expect(sandbox.generation).toBeUndefined();
  });

  it("builds one mount per thread folder, only the user-data one writable, below the configured root", () => {
    const mounts = threadMounts("/data", "u1", "t1", "/mnt");
    const host = threadPaths("/data", "u1", "t1");
    expect(mounts).toEqual([
      { host: host.userData, container: "/mnt/user-data", readOnly: false },
      { host: join(host.threadDir, "acp-workspace"), container: "/mnt/acp-workspace", readOnly: true },
    ]);
    expect(mountFlags(mounts)).toEqual([
      "-v",
      `${host.userData}:/mnt/user-data`,
      "-v",
      `${join(host.threadDir, "acp-workspace")}:/mnt/acp-workspace:ro`,
    ]);
  });

  it("parses docker port output", () => {
    expect(parseHostPort("127.0.0.1:49153\n")).toBe(49153);
    expect(parseHostPort("[::]:32768")).toBe(32768);
    expect(parseHostPort("")).toBeNull();
  });
});
