import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAntlerError, threadPaths } from "@antler/kernel";
import { parseConfigText } from "@antler/kernel/config";
import { captureLogs, runPluginConformance, runSandboxConformance } from "@antler/kernel/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import tenkiPlugin, {
  authHeaders,
  TENKI_SESSION_TAG,
  type TenkiConfigInput,
  TenkiSandboxProvider,
  tenkiConfigSchema,
} from "../src/index.js";
import { startTenkiStandIn, type TenkiStandIn } from "./stand-in.js";

const KEY = "tk_test_key";

runPluginConformance(tenkiPlugin, {
  validConfig: { api_url: "http://127.0.0.1:1", project_id: "proj_1", pool_size: 1 },
  invalidConfigs: [{ api_url: "ftp://x" }, { scratch_dir: "relative/dir" }, { pool_size: -1 }, { unknown_key: 1 }],
});

describe("config", () => {
  it("accepts the README's config.yaml example as written", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const yaml = /```yaml\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const document = parseConfigText(yaml, { env: { TENKI_API_KEY: "tk_x" }, dir: tmpdir() });
    const data = document.data as { plugins: Array<{ package: string; config: unknown }>; sandbox: { provider: string } };
    expect(data.plugins[0]?.package).toBe(tenkiPlugin.name);
    expect(tenkiConfigSchema.parse(data.plugins[0]?.config)).toMatchObject({
      api_url: "https://api.tenki.cloud",
      api_key: "tk_x",
      pool_size: 4,
    });
    expect(data.sandbox.provider).toBe("tenki");
  });

  it("sends a tk_ key as a bearer token and other token forms the way Tenki's SDKs do", () => {
    expect(authHeaders("tk_abc")).toEqual({ authorization: "Bearer tk_abc" });
    expect(authHeaders("ory_st_abc")).toEqual({ "x-session-token": "ory_st_abc" });
    expect(authHeaders("other")).toEqual({ cookie: "tenki_session=other" });
  });
});

let conformance: { standIn: TenkiStandIn; dir: string } | undefined;
runSandboxConformance({
  name: "tenki over a loopback Tenki API",
  create: async () => {
    const standIn = await startTenkiStandIn({ key: KEY });
    const dir = await mkdtemp(join(tmpdir(), "antler-tenki-conformance-"));
    conformance = { standIn, dir };
    const provider = new TenkiSandboxProvider({
      config: tenkiConfigSchema.parse({ api_url: standIn.apiUrl, pool_size: 2 }),
      baseDir: join(dir, "base"),
      logger: captureLogs().logger,
      env: { TENKI_API_KEY: KEY },
    });
    return { provider };
  },
  close: async () => {
    await conformance?.standIn.close();
    if (conformance) await rm(conformance.dir, { recursive: true, force: true });
    conformance = undefined;
  },
});

describe("TenkiSandboxProvider against the loopback Tenki API", () => {
  let standIn: TenkiStandIn;
  let dir: string;
  let providers: TenkiSandboxProvider[];

  beforeEach(async () => {
    standIn = await startTenkiStandIn({ key: KEY, pageSize: 1 });
    dir = await mkdtemp(join(tmpdir(), "antler-tenki-"));
    providers = [];
  });

  afterEach(async () => {
    await Promise.all(providers.map((p) => p.close()));
    await standIn.close();
    await rm(dir, { recursive: true, force: true });
  });

  function makeProvider(config: TenkiConfigInput = {}, env: Record<string, string> = { TENKI_API_KEY: KEY }) {
    const logs = captureLogs();
    const provider = new TenkiSandboxProvider({
      config: tenkiConfigSchema.parse({ api_url: standIn.apiUrl, ...config }),
      baseDir: join(dir, "base"),
      logger: logs.logger,
      env,
      retryBaseMs: 5,
      pollMs: 10,
    });
    providers.push(provider);
    return { provider, lines: logs.lines };
  }

  const callsTo = (method: string) => standIn.calls.filter((c) => c.method === method);

  it("creates a session with CreateSession: the SDKs' owner fields, thread metadata, tag, project, size and maxDuration", async () => {
    const { provider } = makeProvider({ project_id: "proj_1", cpu_cores: 2, memory_mb: 2048, timeout_seconds: 900 });
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    expect(sandbox.id).toBe("tenki:u1/t1");
    const [create] = callsTo("CreateSession");
    expect(create?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(create?.headers["connect-protocol-version"]).toBe("1");
    expect(create?.body).toMatchObject({
      ownerType: "SERVICE",
      ownerId: "self",
      metadata: { antler_user: "u1", antler_thread: "t1" },
      tags: [TENKI_SESSION_TAG],
      projectId: "proj_1",
      cpuCores: 2,
      memoryMb: 2048,
      maxDuration: "900s",
      waitReady: true,
    });
    expect(sandbox.generation).toBe([...standIn.sessions.keys()][0]);
  });

  it("waits for a session that is still starting, polling GetSession until it is RUNNING", async () => {
    await standIn.close();
    standIn = await startTenkiStandIn({ key: KEY, startPolls: 3 });
    const { provider } = makeProvider();
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    expect((await sandbox.executeCommand("echo up")).stdout).toBe("up\n");
    expect(callsTo("GetSession").length).toBeGreaterThanOrEqual(3);
  });

  it("runs a command with ExecuteCommand and reads its captured output back over the data plane, then removes it", async () => {
    const { provider } = makeProvider();
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    const result = await sandbox.executeCommand("echo $GREETING; pwd; echo oops >&2; exit 3", { env: { GREETING: "hi" }, timeout: 5_000 });
    expect(result).toMatchObject({ exitCode: 3, stdout: "hi\n/mnt/user-data/workspace\n", stderr: "oops\n", timedOut: false });
    const exec = callsTo("ExecuteCommand").at(-1);
    expect(exec?.body).toMatchObject({ command: "/bin/sh", env: { GREETING: "hi" }, timeout: "5s" });
    const reads = callsTo("ReadFile").slice(-2);
    expect(reads.map((c) => (c.body.request as { path: string }).path).sort()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\/tmp\/antler-exec-[0-9a-f]+\.err$/),
        expect.stringMatching(/^\/tmp\/antler-exec-[0-9a-f]+\.out$/),
      ]),
    );
    expect(reads[0]?.headers["x-tenki-session-cert"]).toMatch(/^cert_/);
    expect(reads[0]?.headers.authorization).toBeUndefined();
    const removed = callsTo("Remove")
      .slice(-2)
      .map((c) => (c.body.request as { path: string }).path);
    expect(removed.every((p) => p.startsWith("/tmp/antler-exec-"))).toBe(true);
  });

  it("reports a command Tenki timed out as timed out", async () => {
    const { provider } = makeProvider();
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    const result = await sandbox.executeCommand("sleep 30", { timeout: 300 });
    expect(result).toMatchObject({ exitCode: null, timedOut: true });
    expect(callsTo("ExecuteCommand").at(-1)?.body.timeout).toBe("0.3s");
  });

  it("writes files with Mkdir then WriteFile (base64), reads them back byte for byte, and lists with List", async () => {
    const { provider } = makeProvider();
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    const bytes = new Uint8Array([0, 1, 2, 255, 254]);
    await sandbox.updateFile("/mnt/user-data/workspace/deep/er/data.bin", bytes);
    expect(callsTo("Mkdir").at(-1)?.body.request).toMatchObject({ path: "/mnt/user-data/workspace/deep/er", recursive: true });
    expect(callsTo("WriteFile").at(-1)?.body.request).toMatchObject({ content: Buffer.from(bytes).toString("base64") });
    expect(Array.from(await sandbox.downloadFile("/mnt/user-data/workspace/deep/er/data.bin"))).toEqual(Array.from(bytes));
    const listing = await sandbox.listDir("/mnt/user-data/workspace", 3);
    expect(listing.find((e) => e.path.endsWith("data.bin"))).toMatchObject({ type: "file", size: 5 });
    expect(listing.find((e) => e.path === "/mnt/user-data/workspace/deep")).toMatchObject({ type: "directory" });
  });

  it("mints a new data-plane credential when the data plane refuses the cached one", async () => {
    const { provider } = makeProvider();
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    await sandbox.writeFile("/mnt/user-data/workspace/a.txt", "one");
    const minted = callsTo("CreateSessionCredential").length;
    standIn.revokeCredentials();
    expect(await sandbox.readFile("/mnt/user-data/workspace/a.txt")).toBe("one");
    expect(callsTo("CreateSessionCredential").length).toBe(minted + 1);
  });

  it("pushes the thread's uploads into the session at acquire", async () => {
    const paths = threadPaths(join(dir, "base"), "u1", "t1");
    await mkdir(paths.uploads, { recursive: true });
    await writeFile(join(paths.uploads, "report.csv"), "a,b\n");
    const { provider } = makeProvider();
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    expect(await sandbox.readFile("/mnt/user-data/uploads/report.csv")).toBe("a,b\n");
  });

  it("shows the skills folders read-only at /mnt/skills, uploaded into the VM on acquire", async () => {
    const skills = join(dir, "skills-public");
    await mkdir(join(skills, "pdf"), { recursive: true });
    await writeFile(join(skills, "pdf", "SKILL.md"), "# pdf\n");
    const provider = new TenkiSandboxProvider({
      config: tenkiConfigSchema.parse({ api_url: standIn.apiUrl }),
      baseDir: join(dir, "base"),
      logger: captureLogs().logger,
      env: { TENKI_API_KEY: KEY },
      mounts: () => [{ hostPath: skills, virtualPath: "/mnt/skills/public" }],
    });
    providers.push(provider);
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    expect(await sandbox.readFile("/mnt/skills/public/pdf/SKILL.md")).toBe("# pdf\n");
    const refused = await sandbox.writeFile("/mnt/skills/public/pdf/SKILL.md", "x").catch((e: unknown) => e);
    expect(isAntlerError(refused, "ANTLER_ERR_SANDBOX_PATH_READ_ONLY")).toBe(true);
  });

  it("refuses a missing key with CONFIG_ENV_MISSING naming both variables, before any call", async () => {
    const { provider } = makeProvider({}, {});
    const err = await provider.acquire("t1", { userId: "u1" }).catch((e: unknown) => e);
    expect(isAntlerError(err, "ANTLER_ERR_CONFIG_ENV_MISSING")).toBe(true);
    expect((err as Error).message).toContain("TENKI_AUTH_TOKEN and TENKI_API_KEY");
    expect(standIn.calls).toEqual([]);
  });

  it("reports a refused key as SANDBOX_UNAVAILABLE saying so, without retrying", async () => {
    const { provider } = makeProvider({}, { TENKI_API_KEY: "tk_wrong" });
    const err = await provider.acquire("t1", { userId: "u1" }).catch((e: unknown) => e);
    expect(isAntlerError(err, "ANTLER_ERR_SANDBOX_UNAVAILABLE")).toBe(true);
    expect((err as Error).message).toContain("Tenki refused the credentials");
    expect((err as Error).message).toContain("401 unauthenticated");
    expect(callsTo("CreateSession")).toHaveLength(1);
  });

  it("retries a rate-limited CreateSession, but never a CreateSession that failed with unavailable (it may have booted a VM)", async () => {
    standIn.fail({ method: "CreateSession", times: 2, status: 429, code: "resource_exhausted" });
    const { provider } = makeProvider();
    await provider.acquire("t1", { userId: "u1" });
    expect(callsTo("CreateSession")).toHaveLength(3);
    expect(standIn.sessions.size).toBe(1);

    standIn.fail({ method: "CreateSession", times: 1, status: 503, code: "unavailable" });
    const err = await provider.acquire("t2", { userId: "u1" }).catch((e: unknown) => e);
    expect(isAntlerError(err, "ANTLER_ERR_SANDBOX_UNAVAILABLE")).toBe(true);
    expect((err as Error).message).toContain("503 unavailable");
    expect(callsTo("CreateSession")).toHaveLength(4);
  });

  it("retries an idempotent call after 5xx and after a hung request (request_timeout_ms)", async () => {
    const { provider } = makeProvider({ request_timeout_ms: 200, max_retries: 2 });
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    await sandbox.writeFile("/mnt/user-data/workspace/a.txt", "x");
    standIn.fail({ method: "ReadFile", times: 1, status: 503, code: "unavailable" });
    standIn.fail({ method: "ReadFile", times: 1, hangMs: 1_000 });
    expect(await sandbox.readFile("/mnt/user-data/workspace/a.txt")).toBe("x");

    standIn.fail({ method: "ReadFile", times: 5, hangMs: 1_000 });
    const err = await sandbox.readFile("/mnt/user-data/workspace/a.txt").catch((e: unknown) => e);
    expect(isAntlerError(err, "ANTLER_ERR_SANDBOX_UNAVAILABLE")).toBe(true);
    expect((err as Error).message).toContain("no answer within 200 ms (request_timeout_ms)");
  });

  it("reattaches after a restart: a new provider finds the thread's session by metadata (every page) instead of creating one", async () => {
    const first = makeProvider().provider;
    const sandbox = await first.acquire("t1", { userId: "u1" });
    await first.acquire("t2", { userId: "u1" });
    await sandbox.writeFile("/mnt/user-data/workspace/kept.txt", "still here");
    providers.splice(providers.indexOf(first), 1);

    const { provider: second, lines } = makeProvider();
    const again = await second.acquire("t1", { userId: "u1" });
    expect(again.generation).toBe(sandbox.generation);
    expect(await again.readFile("/mnt/user-data/workspace/kept.txt")).toBe("still here");
    expect(callsTo("CreateSession")).toHaveLength(2);
    expect(callsTo("ListSessions").some((c) => c.body.pageToken !== "")).toBe(true);
    expect(lines.some((l) => String(l.msg).includes("tenki: reattached"))).toBe(true);
  });

  it("replaces a parked session Tenki lost (not_found) with a new one, and terminates released sessions when the pool is off", async () => {
    const { provider } = makeProvider({ pool_size: 1 });
    const first = await provider.acquire("t1", { userId: "u1" });
    const lost = first.generation as string;
    await provider.release(first.id);
    await standIn.drop(lost);

    const second = await provider.acquire("t1", { userId: "u1" });
    expect(second.generation).not.toBe(lost);
    expect((await second.executeCommand("echo fresh")).stdout).toBe("fresh\n");

    const { provider: unpooled } = makeProvider({ pool_size: 0 });
    const gone = await unpooled.acquire("t9", { userId: "u1" });
    await unpooled.release(gone.id);
    expect(callsTo("TerminateSession").at(-1)?.body).toEqual({ sessionId: gone.generation });
    expect(standIn.sessions.get(gone.generation as string)?.state).toBe("SESSION_STATE_TERMINATED");
  });
});
