import { ErrorCodes } from "@antler/kernel";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AioClient, AioPathMap, AioSandbox } from "../src/index.js";
import { FakeAioServer } from "./fake-aio-server.js";

describe("AioSandbox over the loopback AIO API", () => {
  let server: FakeAioServer;
  let sandbox: AioSandbox;
  let home: string;

  beforeEach(async () => {
    server = await FakeAioServer.start();
    const box = await server.addSandbox("exec-box");
    home = box.home;
    const client = new AioClient({ baseUrl: box.baseUrl, timeoutMs: 5_000 });
    sandbox = new AioSandbox({ id: "aio:exec-box", client, paths: new AioPathMap(home), homeDir: home, execWaitSeconds: 0.3 });
    await sandbox.prepareFolders();
  });

  afterEach(async () => {
    await server.close();
  });

  it("creates the user-data folders under the container home", async () => {
    const listed = await sandbox.listDir("/mnt/user-data", 1);
    expect(listed.map((e) => e.path).sort()).toEqual(["/mnt/user-data/outputs", "/mnt/user-data/uploads", "/mnt/user-data/workspace"]);
  });

  it("runs each command in its own bash session and closes it", async () => {
    await sandbox.executeCommand("true");
    const created = server.requests.filter((r) => r.path.endsWith("/v1/bash/sessions/create")).at(-1);
    const sessionId = (created?.body as { session_id?: string } | undefined)?.session_id;
    expect(sessionId).toMatch(/^antler-/);
    const exec = server.requests.find(
      (r) => r.path.endsWith("/v1/bash/exec") && (r.body as { session_id: string }).session_id === sessionId,
    );
    expect(exec?.body).toMatchObject({ exec_dir: `${home}/user-data/workspace`, max_output_length: 0 });
    expect(server.requests.at(-1)?.path).toBe(`/sandboxes/exec-box/v1/bash/sessions/${sessionId}/close`);
  });

  it("follows a command that outlives one exec call through /v1/bash/output", async () => {
    const result = await sandbox.executeCommand("echo early; sleep 0.8; echo late; echo warn >&2; exit 4");
    expect(result.stdout).toBe("early\nlate\n");
    expect(result.stderr).toBe("warn\n");
    expect(result.exitCode).toBe(4);
    expect(server.count("POST", /\/v1\/bash\/output$/)).toBeGreaterThan(0);
  });

  it("an abort kills the command and reports it as ended by SIGKILL", async () => {
    const controller = new AbortController();
    const execs = () => server.count("POST", /\/v1\/bash\/exec$/);
    const before = execs();
    const started = Date.now();
    const running = sandbox.executeCommand("sleep 20", { signal: controller.signal });
    // Abort once the command really runs in the container, however long a loaded machine takes to get there.
    for (const deadline = Date.now() + 20_000; execs() === before && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    const result = await running;
    // Well short of the 20 s sleep, with room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(result).toMatchObject({ exitCode: null, signal: "SIGKILL", timedOut: false });
    expect(server.count("POST", /\/v1\/bash\/kill$/)).toBe(1);
  });

  it("an already aborted signal runs nothing", async () => {
    const before = server.count("POST", /\/v1\/bash\/exec$/);
    await expect(sandbox.executeCommand("true", { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: ErrorCodes.RUN_CANCELLED });
    expect(server.count("POST", /\/v1\/bash\/exec$/)).toBe(before);
  });

  it("shows container paths in output as virtual paths", async () => {
    const result = await sandbox.executeCommand(`echo "$HOME/user-data/outputs/r.txt"; ls -d ${home}/user-data/uploads`);
    expect(result.stdout).toBe("/mnt/user-data/outputs/r.txt\n/mnt/user-data/uploads\n");
  });

  it("refuses environment names that are not POSIX names", async () => {
    await expect(sandbox.executeCommand("true", { env: { "BAD-NAME": "x" } })).rejects.toMatchObject({
      code: ErrorCodes.SANDBOX_EXEC_FAILED,
    });
  });

  it("names the virtual path, never the container path, in file errors", async () => {
    const err = (await sandbox.readFile("/mnt/user-data/workspace/nope.txt").catch((e: unknown) => e)) as Error & {
      details: Record<string, unknown>;
    };
    expect(err.message).toContain("/mnt/user-data/workspace/nope.txt");
    expect(err.message).not.toContain(home);
    expect(err.details.path).toBe("/mnt/user-data/workspace/nope.txt");
  });

  it("refuses glob patterns that are absolute or climb", async () => {
    await expect(sandbox.glob("/etc/*")).rejects.toMatchObject({ code: ErrorCodes.PATH_UNSAFE });
    await expect(sandbox.glob("../**/*")).rejects.toMatchObject({ code: ErrorCodes.PATH_UNSAFE });
  });
});
