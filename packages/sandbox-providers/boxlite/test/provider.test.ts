import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAntlerError, threadPaths } from "@antler/kernel";
import { parseConfigText } from "@antler/kernel/config";
import { captureLogs, runPluginConformance, runSandboxConformance } from "@antler/kernel/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import boxlitePlugin, {
  type BoxLiteConfigInput,
  BoxLiteSandboxProvider,
  boxliteConfigSchema,
  readTar,
  tarOneFile,
  threadBoxNamePrefix,
} from "../src/index.js";
import { type BoxLiteStandIn, startBoxLiteStandIn } from "./stand-in.js";

const TOKEN = "boxlite-test-token";

runPluginConformance(boxlitePlugin, {
  validConfig: { api_url: "http://127.0.0.1:1/v1", prefix: "acme", pool_size: 1 },
  invalidConfigs: [{ prefix: "no spaces" }, { api_url: "ftp://x" }, { pool_size: -1 }, { unknown_key: 1 }],
});

describe("config", () => {
  it("accepts the README's config.yaml example as written", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const yaml = /```yaml\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const document = parseConfigText(yaml, { env: { BOXLITE_API_KEY: "k" }, dir: tmpdir() });
    const data = document.data as { plugins: Array<{ package: string; config: unknown }>; sandbox: { provider: string } };
    expect(data.plugins[0]?.package).toBe(boxlitePlugin.name);
    const config = boxliteConfigSchema.parse(data.plugins[0]?.config);
    expect(config).toMatchObject({ api_url: "https://api.boxlite.ai/v1", prefix: "default", api_key: "k", pool_size: 4, max_retries: 3 });
    expect(data.sandbox.provider).toBe("boxlite");
  });
});

let conformance: { standIn: BoxLiteStandIn; dir: string } | undefined;
runSandboxConformance({
  name: "boxlite over a loopback BoxLite API",
  create: async () => {
    const standIn = await startBoxLiteStandIn({ token: TOKEN });
    const dir = await mkdtemp(join(tmpdir(), "antler-boxlite-conformance-"));
    conformance = { standIn, dir };
    const provider = new BoxLiteSandboxProvider({
      config: boxliteConfigSchema.parse({ api_url: standIn.apiUrl, pool_size: 2 }),
      baseDir: join(dir, "base"),
      logger: captureLogs().logger,
      env: { BOXLITE_API_KEY: TOKEN },
    });
    return { provider };
  },
  close: async () => {
    await conformance?.standIn.close();
    if (conformance) await rm(conformance.dir, { recursive: true, force: true });
    conformance = undefined;
  },
});

describe("BoxLiteSandboxProvider against the loopback BoxLite API", () => {
  let standIn: BoxLiteStandIn;
  let dir: string;
  let providers: BoxLiteSandboxProvider[];

  beforeEach(async () => {
    standIn = await startBoxLiteStandIn({ token: TOKEN, prefix: "acme", pageSize: 1 });
    dir = await mkdtemp(join(tmpdir(), "antler-boxlite-"));
    providers = [];
  });

  afterEach(async () => {
    await Promise.all(providers.map((p) => p.close()));
    await standIn.close();
    await rm(dir, { recursive: true, force: true });
  });

  function makeProvider(config: BoxLiteConfigInput = {}, env: Record<string, string> = { BOXLITE_API_KEY: TOKEN }) {
    const logs = captureLogs();
    const provider = new BoxLiteSandboxProvider({
      config: boxliteConfigSchema.parse({ api_url: standIn.apiUrl, prefix: "acme", ...config }),
      baseDir: join(dir, "base"),
      logger: logs.logger,
      env,
      retryBaseMs: 5,
    });
    providers.push(provider);
    return { provider, lines: logs.lines };
  }

  const requestsTo = (method: string, path: RegExp) => standIn.requests.filter((r) => r.method === method && path.test(r.path));

  it("creates a box with POST /v1/{prefix}/boxes: bearer token, idempotency key, image and size, a name carrying the thread", async () => {
    const { provider } = makeProvider({ image: "python:3.12-slim", cpus: 2, memory_mib: 1024 });
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    expect(sandbox.id).toBe("boxlite:u1/t1");
    const [create] = requestsTo("POST", /^\/v1\/acme\/boxes$/);
    expect(create?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(create?.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(create?.json).toMatchObject({ image: "python:3.12-slim", cpus: 2, memory_mib: 1024, auto_remove: false, detach: true });
    expect(String((create?.json as { name?: string } | undefined)?.name).startsWith(threadBoxNamePrefix("u1", "t1"))).toBe(true);
    const box = [...standIn.boxes.values()][0];
    expect(box?.image).toBe("python:3.12-slim");
    expect(sandbox.generation).toBe(box?.box_id);
  });

  it("runs commands as /bin/sh -c with env and working_dir, streaming output over SSE", async () => {
    const { provider } = makeProvider();
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    const result = await sandbox.executeCommand("echo $GREETING; pwd; echo oops >&2; exit 3", { env: { GREETING: "hi" } });
    expect(result).toMatchObject({ exitCode: 3, timedOut: false });
    expect(result.stdout).toBe("hi\n/mnt/user-data/workspace\n");
    expect(result.stderr).toBe("oops\n");
    const exec = requestsTo("POST", /\/exec$/).at(-1);
    expect(exec?.json).toMatchObject({ command: "/bin/sh", env: { GREETING: "hi" }, working_dir: "/mnt/user-data/workspace" });
    expect(requestsTo("GET", /\/executions\/[^/]+\/output$/).at(-1)?.headers.accept).toBe("text/event-stream");
  });

  it("kills a command past its timeout with the signal endpoint and reports it timed out", async () => {
    const { provider } = makeProvider();
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    const result = await sandbox.executeCommand("sleep 30", { timeout: 300 });
    expect(result).toMatchObject({ exitCode: null, timedOut: true });
    expect(requestsTo("POST", /\/executions\/[^/]+\/signal$/).at(-1)?.json).toEqual({ signal: 9 });
  });

  it("moves files as tar archives through the files endpoint, in both directions, with parent folders made", async () => {
    const { provider } = makeProvider();
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    const bytes = new Uint8Array([0, 1, 2, 255, 254]);
    const deep = `/mnt/user-data/workspace/${"nested-folder/".repeat(8)}data.bin`;
    await sandbox.updateFile(deep, bytes);
    const put = requestsTo("PUT", /\/files$/).at(-1);
    expect(put?.query).toEqual({ path: "/", overwrite: "true" });
    expect(put?.headers["content-type"]).toBe("application/x-tar");
    expect(Array.from(await sandbox.downloadFile(deep))).toEqual(Array.from(bytes));
    expect(requestsTo("GET", /\/files$/).at(-1)?.query.path).toBe(deep);
    expect((await sandbox.executeCommand(`wc -c < ${deep}`)).stdout.trim()).toBe("5");
  });

  it("reads a file over 100 characters of path back (pax names) and refuses a folder as a file", async () => {
    const long = `${"a".repeat(120)}/b.txt`;
    const entries = readTar(tarOneFile(long, new TextEncoder().encode("x")));
    expect(entries.map((e) => e.name)).toEqual([long]);
    const { provider } = makeProvider();
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    const err = await sandbox.readFile("/mnt/user-data/workspace").catch((e: unknown) => e);
    expect(isAntlerError(err)).toBe(true);
    expect((err as Error).message).toContain("is not a regular file");
  });

  it("pushes the thread's uploads into the box at acquire", async () => {
    const paths = threadPaths(join(dir, "base"), "u1", "t1");
    await mkdir(paths.uploads, { recursive: true });
    await writeFile(join(paths.uploads, "report.csv"), "a,b\n1,2\n");
    const { provider } = makeProvider();
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    expect(await sandbox.readFile("/mnt/user-data/uploads/report.csv")).toBe("a,b\n1,2\n");
  });

  it("shows the skills folders read-only at /mnt/skills, uploaded into the VM on acquire", async () => {
    const skills = join(dir, "skills-public");
    await mkdir(join(skills, "pdf"), { recursive: true });
    await writeFile(join(skills, "pdf", "SKILL.md"), "# pdf\n");
    const provider = new BoxLiteSandboxProvider({
      config: boxliteConfigSchema.parse({ api_url: standIn.apiUrl, prefix: "acme" }),
      baseDir: join(dir, "base"),
      logger: captureLogs().logger,
      env: { BOXLITE_API_KEY: TOKEN },
      mounts: () => [{ hostPath: skills, virtualPath: "/mnt/skills/public" }],
    });
    providers.push(provider);
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    expect(await sandbox.readFile("/mnt/skills/public/pdf/SKILL.md")).toBe("# pdf\n");
    const refused = await sandbox.writeFile("/mnt/skills/public/pdf/SKILL.md", "x").catch((e: unknown) => e);
    expect(isAntlerError(refused, "ANTLER_ERR_SANDBOX_PATH_READ_ONLY")).toBe(true);
  });

  it("refuses a missing API key with CONFIG_ENV_MISSING before calling the API", async () => {
    const { provider } = makeProvider({}, {});
    const err = await provider.acquire("t1", { userId: "u1" }).catch((e: unknown) => e);
    expect(isAntlerError(err, "ANTLER_ERR_CONFIG_ENV_MISSING")).toBe(true);
    expect((err as Error).message).toContain("BOXLITE_API_KEY");
    expect(standIn.requests).toEqual([]);
  });

  it("reports a refused API key as SANDBOX_UNAVAILABLE naming the key, without retrying", async () => {
    const { provider } = makeProvider({}, { BOXLITE_API_KEY: "wrong" });
    const err = await provider.acquire("t1", { userId: "u1" }).catch((e: unknown) => e);
    expect(isAntlerError(err, "ANTLER_ERR_SANDBOX_UNAVAILABLE")).toBe(true);
    expect((err as Error).message).toContain("BoxLite refused the API key");
    expect((err as Error).message).toContain("401 UnauthorizedError");
    expect(requestsTo("POST", /^\/v1\/acme\/boxes$/)).toHaveLength(1);
    expect(standIn.boxes.size).toBe(0);
  });

  it("retries a 503 on create with the same idempotency key, and creates one box", async () => {
    standIn.fail({ method: "POST", path: /^\/v1\/acme\/boxes$/, times: 2, status: 503 });
    const { provider } = makeProvider();
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    expect((await sandbox.executeCommand("echo ok")).stdout).toBe("ok\n");
    const creates = requestsTo("POST", /^\/v1\/acme\/boxes$/);
    expect(creates).toHaveLength(3);
    expect(new Set(creates.map((r) => r.headers["idempotency-key"])).size).toBe(1);
    expect(standIn.boxes.size).toBe(1);
  });

  it("gives up after max_retries 5xx answers with SANDBOX_UNAVAILABLE carrying the last answer", async () => {
    standIn.fail({ method: "POST", path: /^\/v1\/acme\/boxes$/, times: 10, status: 502 });
    const { provider } = makeProvider({ max_retries: 2 });
    const err = await provider.acquire("t1", { userId: "u1" }).catch((e: unknown) => e);
    expect(isAntlerError(err, "ANTLER_ERR_SANDBOX_UNAVAILABLE")).toBe(true);
    expect((err as Error).message).toContain("after 3 attempt(s): 502 InternalError: scripted failure");
    expect(requestsTo("POST", /^\/v1\/acme\/boxes$/)).toHaveLength(3);
  });

  it("times a hung request out after request_timeout_ms and retries it", async () => {
    const { provider } = makeProvider({ request_timeout_ms: 200, max_retries: 1 });
    await provider.acquire("t1", { userId: "u1" });
    standIn.fail({ method: "PUT", path: /\/files$/, times: 1, hangMs: 1_000 });
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    await sandbox.writeFile("/mnt/user-data/workspace/a.txt", "after a timeout");
    expect(await sandbox.readFile("/mnt/user-data/workspace/a.txt")).toBe("after a timeout");

    standIn.fail({ method: "PUT", path: /\/files$/, times: 5, hangMs: 1_000 });
    const err = await sandbox.writeFile("/mnt/user-data/workspace/b.txt", "never").catch((e: unknown) => e);
    expect(isAntlerError(err, "ANTLER_ERR_SANDBOX_UNAVAILABLE")).toBe(true);
    expect((err as Error).message).toContain("no answer within 200 ms (request_timeout_ms)");
  });

  it("reattaches after a restart: a new provider finds the thread's box by name (listing every page) instead of creating one", async () => {
    const first = makeProvider().provider;
    const sandbox = await first.acquire("t1", { userId: "u1" });
    await first.acquire("t2", { userId: "u1" });
    await sandbox.writeFile("/mnt/user-data/workspace/kept.txt", "still here");
    const boxId = sandbox.generation;
    // A crash: nothing is released, the boxes keep running.
    providers.splice(providers.indexOf(first), 1);

    const { provider: second, lines } = makeProvider();
    const again = await second.acquire("t1", { userId: "u1" });
    expect(again.generation).toBe(boxId);
    expect(await again.readFile("/mnt/user-data/workspace/kept.txt")).toBe("still here");
    expect(standIn.boxes.size).toBe(2);
    expect(requestsTo("GET", /^\/v1\/acme\/boxes$/).some((r) => r.query.pageToken !== undefined)).toBe(true);
    expect(lines.some((l) => String(l.msg).includes("boxlite: reattached"))).toBe(true);
  });

  it("replaces a parked box the service lost (404) with a new one, and removes released boxes when the pool is off", async () => {
    const { provider } = makeProvider({ pool_size: 1 });
    const first = await provider.acquire("t1", { userId: "u1" });
    const lostId = first.generation as string;
    await provider.release(first.id);
    await standIn.drop(lostId);

    const second = await provider.acquire("t1", { userId: "u1" });
    expect(second.id).toBe(first.id);
    expect(second.generation).not.toBe(lostId);
    expect((await second.executeCommand("echo fresh")).stdout).toBe("fresh\n");

    const { provider: unpooled } = makeProvider({ pool_size: 0 });
    const gone = await unpooled.acquire("t9", { userId: "u1" });
    const goneId = gone.generation as string;
    await unpooled.release(gone.id);
    expect(standIn.boxes.has(goneId)).toBe(false);
    expect(requestsTo("DELETE", new RegExp(`/boxes/${goneId}$`)).at(-1)?.query).toEqual({ force: "true" });
  });
});
