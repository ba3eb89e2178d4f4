import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AntlerError, ErrorCodes, isAntlerError, threadPaths } from "@antler/kernel";
import { captureLogs, runPluginConformance, runSandboxConformance } from "@antler/kernel/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import e2bPlugin, {
  createFolderRemote,
  type E2BConfigInput,
  E2BSandboxProvider,
  e2bConfigSchema,
  type FolderRemote,
  VendorSandboxProvider,
} from "../src/index.js";

let root: string;
let baseDir: string;
let folder: FolderRemote;
let providers: E2BSandboxProvider[];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "antler-e2b-provider-"));
  baseDir = join(root, "base");
  folder = createFolderRemote({ root: join(root, "remote") });
  providers = [];
});

afterEach(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await rm(root, { recursive: true, force: true });
});

function makeProvider(config: E2BConfigInput = {}, remote: FolderRemote = folder) {
  const logs = captureLogs();
  const provider = new E2BSandboxProvider({ config: e2bConfigSchema.parse(config), baseDir, logger: logs.logger, remote });
  providers.push(provider);
  return { provider, lines: logs.lines };
}

/** Breaks a sandbox the way a wedged VM would fail the bootstrap: `/mnt/user-data` is no longer a folder. */
async function breakUserData(sandboxDir: string): Promise<void> {
  await mkdir(join(sandboxDir, "mnt"), { recursive: true });
  await rm(join(sandboxDir, "mnt", "user-data"), { recursive: true, force: true });
  await writeFile(join(sandboxDir, "mnt", "user-data"), "not a folder");
}

describe("E2BSandboxProvider", () => {
  it("bootstraps the user-data folders in a new sandbox", async () => {
    const { provider } = makeProvider();
    const sandbox = await provider.acquire("t1", { userId: "u1" });

    const listing = await sandbox.listDir("/mnt/user-data", 1);
    expect(listing.map((e) => e.path).sort()).toEqual(["/mnt/user-data/outputs", "/mnt/user-data/uploads", "/mnt/user-data/workspace"]);
    expect(sandbox.id).toBe("e2b:u1/t1");
    expect(provider.get(sandbox.id)).toBe(sandbox);
    expect(await provider.acquire("t1", { userId: "u1" })).toBe(sandbox);
    expect(provider.isolated).toBe(true);
    expect(provider.id).toBe("e2b");
  });

  it("kills the remote sandbox and raises SANDBOX_UNAVAILABLE when the bootstrap fails", async () => {
    const broken = createFolderRemote({ root: join(root, "remote-broken"), template: breakUserData });
    const { provider } = makeProvider({}, broken);

    const err = await provider.acquire("t1", { userId: "u1" }).catch((e: unknown) => e);

    expect(isAntlerError(err, "ANTLER_ERR_SANDBOX_UNAVAILABLE")).toBe(true);
    expect(String((err as Error).message)).toMatch(/bootstrap/);
    expect((err as Error).cause).toBeInstanceOf(Error);
    expect(broken.liveIds()).toEqual([]);
  });

  it("reclaims a parked sandbox for the same thread, keeping its workspace", async () => {
    const { provider } = makeProvider({ pool_size: 2 });
    const first = await provider.acquire("t1", { userId: "u1" });
    await first.writeFile("/mnt/user-data/workspace/notes.txt", "kept");
    await provider.release(first.id);
    expect(provider.get(first.id)).toBeUndefined();
    expect(provider.parkedIds()).toEqual([first.id]);

    const again = await provider.acquire("t1", { userId: "u1" });

    expect(again.id).toBe(first.id);
    expect(again.remote.sandboxId).toBe(first.remote.sandboxId);
    expect(await again.readFile("/mnt/user-data/workspace/notes.txt")).toBe("kept");
    expect(provider.parkedIds()).toEqual([]);
  });

  it("discards a broken parked sandbox and goes on with a fresh one", async () => {
    const { provider, lines } = makeProvider({ pool_size: 2 });
    const first = await provider.acquire("t1", { userId: "u1" });
    await provider.release(first.id);
    await breakUserData(folder.sandboxDir(first.remote.sandboxId));

    const fresh = await provider.acquire("t1", { userId: "u1" });

    // Same thread-stable id, different remote sandbox behind it.
    expect(fresh.id).toBe(first.id);
    expect(fresh.remote.sandboxId).not.toBe(first.remote.sandboxId);
    expect(folder.liveIds()).toEqual([fresh.remote.sandboxId]);
    expect(lines.some((l) => l.level === "warn" && String(l.msg).includes("parked sandbox failed"))).toBe(true);
    expect((await fresh.listDir("/mnt/user-data", 1)).length).toBe(3);
  });

  it("discards a parked sandbox that expired remotely", async () => {
    const { provider } = makeProvider({ pool_size: 2 });
    const first = await provider.acquire("t1", { userId: "u1" });
    await provider.release(first.id);
    await folder.kill(first.remote.sandboxId);

    const fresh = await provider.acquire("t1", { userId: "u1" });

    expect(fresh.remote.sandboxId).not.toBe(first.remote.sandboxId);
    expect(folder.liveIds()).toEqual([fresh.remote.sandboxId]);
  });

  it("after a restart, kills the thread's running sandbox when it fails the bootstrap, and goes on with a fresh one", async () => {
    const before = makeProvider().provider;
    const old = await before.acquire("t1", { userId: "u1" });
    // The process restarts: the old provider is gone without a release; the VM keeps running, and breaks.
    providers.splice(providers.indexOf(before), 1);
    await breakUserData(folder.sandboxDir(old.remote.sandboxId));
    const { provider, lines } = makeProvider();

    const fresh = await provider.acquire("t1", { userId: "u1" });

    expect(fresh.remote.sandboxId).not.toBe(old.remote.sandboxId);
    expect(folder.liveIds()).toEqual([fresh.remote.sandboxId]);
    expect(lines.some((l) => l.level === "warn" && String(l.msg).includes("could not be reattached; discarding it"))).toBe(true);
  });

  it("after a restart, kills a listed sandbox that does not connect instead of leaving it to bill until its timeout", async () => {
    const before = makeProvider().provider;
    const old = await before.acquire("t1", { userId: "u1" });
    providers.splice(providers.indexOf(before), 1);
    const unreachable: FolderRemote = {
      ...folder,
      connect: async (id) => {
        throw new Error(`envd of ${id} does not answer`);
      },
    };
    const { provider } = makeProvider({}, unreachable);

    const fresh = await provider.acquire("t1", { userId: "u1" });

    expect(fresh.remote.sandboxId).not.toBe(old.remote.sandboxId);
    expect(folder.liveIds()).toEqual([fresh.remote.sandboxId]);
  });

  it("syncs outputs to the thread's host outputs folder on release, with the manifest in the thread folder", async () => {
    const { provider } = makeProvider({ pool_size: 0 });
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    await sandbox.executeCommand("mkdir -p /mnt/user-data/outputs/sub && printf done > /mnt/user-data/outputs/sub/result.txt");

    await provider.release(sandbox.id);

    const paths = threadPaths(baseDir, "u1", "t1");
    expect(await readFile(join(paths.outputs, "sub", "result.txt"), "utf8")).toBe("done");
    const manifest = JSON.parse(await readFile(join(paths.threadDir, ".e2b-sync.json"), "utf8")) as { sandboxId: string };
    expect(manifest.sandboxId).toBe(sandbox.remote.sandboxId);
    // pool_size 0: released means killed.
    expect(folder.liveIds()).toEqual([]);
  });

  it("evicts and kills the oldest parked sandbox beyond pool_size", async () => {
    const { provider } = makeProvider({ pool_size: 1 });
    const a = await provider.acquire("ta", { userId: "u1" });
    const b = await provider.acquire("tb", { userId: "u1" });
    await provider.release(a.id);
    await provider.release(b.id);

    expect(provider.parkedIds()).toEqual([b.id]);
    expect(folder.liveIds()).toEqual([b.remote.sandboxId]);
  });

  it("names E2B_API_KEY when no key is configured, at acquire time", async () => {
    const logs = captureLogs();
    const provider = new E2BSandboxProvider({ config: e2bConfigSchema.parse({}), baseDir, logger: logs.logger, env: {} });
    providers.push(provider);

    const err = await provider.acquire("t1", { userId: "u1" }).catch((e: unknown) => e);

    expect(isAntlerError(err, "ANTLER_ERR_CONFIG_ENV_MISSING")).toBe(true);
    expect(String((err as Error).message)).toContain("E2B_API_KEY");
  });

  it("runs commands with env and cwd, and serves the file operations of the Sandbox contract", async () => {
    const { provider } = makeProvider();
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    await mkdir(join(folder.sandboxDir(sandbox.remote.sandboxId), "mnt", "user-data", "workspace", "src"), { recursive: true });

    const result = await sandbox.executeCommand('printf "%s" "$GREETING" > out.txt; ls', {
      env: { GREETING: "hi" },
      cwd: "/mnt/user-data/workspace",
    });
    expect(result.exitCode).toBe(0);
    expect(await sandbox.readFile("/mnt/user-data/workspace/out.txt")).toBe("hi");
    const failed = await sandbox.executeCommand("exit 3");
    expect(failed.exitCode).toBe(3);
    const slow = await sandbox.executeCommand("sleep 5", { timeout: 100 });
    expect(slow.timedOut).toBe(true);
    expect(slow.exitCode).toBeNull();

    await sandbox.writeFile("/mnt/user-data/workspace/src/a.ts", "one\ntwo\nthree\n");
    await sandbox.writeFile("/mnt/user-data/workspace/src/a.ts", "four\n", { append: true });
    expect(await sandbox.readFile("/mnt/user-data/workspace/src/a.ts", { startLine: 2, endLine: 4 })).toBe("two\nthree\nfour");
    await sandbox.updateFile("/mnt/user-data/workspace/b.bin", new Uint8Array([1, 2, 3]));
    expect(await sandbox.downloadFile("/mnt/user-data/workspace/b.bin")).toEqual(new Uint8Array([1, 2, 3]));
    expect(await sandbox.glob("**/*.ts")).toEqual(["/mnt/user-data/workspace/src/a.ts"]);
    expect(await sandbox.grep("^t", { glob: "*.ts" })).toEqual([
      { path: "/mnt/user-data/workspace/src/a.ts", line: 2, text: "two" },
      { path: "/mnt/user-data/workspace/src/a.ts", line: 3, text: "three" },
    ]);

    await expect(sandbox.readFile("/etc/passwd")).rejects.toMatchObject({ code: "ANTLER_ERR_PATH_UNSAFE" });
    await expect(sandbox.writeFile("/mnt/skills/x.md", "x")).rejects.toMatchObject({ code: "ANTLER_ERR_SANDBOX_PATH_READ_ONLY" });
    await expect(sandbox.executeCommand("true", { env: { "BAD-NAME": "x" } })).rejects.toMatchObject({
      code: "ANTLER_ERR_SANDBOX_EXEC_FAILED",
    });
  });

  it("syncs and kills everything on close", async () => {
    const { provider } = makeProvider({ pool_size: 2 });
    const a = await provider.acquire("ta", { userId: "u1" });
    await a.writeFile("/mnt/user-data/outputs/final.txt", "final");
    const b = await provider.acquire("tb", { userId: "u1" });
    await provider.release(b.id);

    await provider.close();

    expect(folder.liveIds()).toEqual([]);
    expect(await readFile(join(threadPaths(baseDir, "u1", "ta").outputs, "final.txt"), "utf8")).toBe("final");
    await expect(provider.acquire("ta", { userId: "u1" })).rejects.toMatchObject({ code: "ANTLER_ERR_SANDBOX_UNAVAILABLE" });
  });
});

runPluginConformance(e2bPlugin, {
  validConfig: { pool_size: 1, deadline_ms: 5000 },
  invalidConfigs: [{ pool_size: -1 }, { max_files: "many" }],
});

let conformanceRoot: string | null = null;
runSandboxConformance({
  name: "e2b over a folder remote",
  create: async () => {
    conformanceRoot = await mkdtemp(join(tmpdir(), "antler-e2b-conformance-"));
    const provider = new E2BSandboxProvider({
      config: e2bConfigSchema.parse({ pool_size: 2 }),
      baseDir: join(conformanceRoot, "base"),
      logger: captureLogs().logger,
      remote: createFolderRemote({ root: join(conformanceRoot, "remote") }),
    });
    return { provider };
  },
  close: async () => {
    if (conformanceRoot) await rm(conformanceRoot, { recursive: true, force: true });
    conformanceRoot = null;
  },
});

describe("E2BSandboxProvider mounts (skills)", () => {
  it("uploads each user's mount folders into a new sandbox; they read back under /mnt/skills and refuse writes", async () => {
    const publicDir = join(root, "skills", "public");
    const customOf = (user: string) => join(root, "custom", user);
    await mkdir(join(publicDir, "report-writing"), { recursive: true });
    await writeFile(join(publicDir, "report-writing", "SKILL.md"), "---\nname: report-writing\n---\npublic body\n");
    await mkdir(join(customOf("alice"), "tidy-notes", "templates"), { recursive: true });
    await writeFile(join(customOf("alice"), "tidy-notes", "templates", "summary.md"), "# alice's template\n");
    const provider = new E2BSandboxProvider({
      config: e2bConfigSchema.parse({}),
      baseDir,
      logger: captureLogs().logger,
      remote: folder,
      mounts: (user) => [
        { hostPath: publicDir, virtualPath: "/mnt/skills/public" },
        { hostPath: customOf(user), virtualPath: "/mnt/skills/custom" },
      ],
    });
    providers.push(provider);
    const alice = await provider.acquire("t1", { userId: "alice" });
    expect(await alice.readFile("/mnt/skills/public/report-writing/SKILL.md")).toContain("public body");
    expect(await alice.readFile("/mnt/skills/custom/tidy-notes/templates/summary.md")).toBe("# alice's template\n");
    await expect(alice.writeFile("/mnt/skills/custom/tidy-notes/SKILL.md", "x")).rejects.toMatchObject({
      code: "ANTLER_ERR_SANDBOX_PATH_READ_ONLY",
    });
    const bob = await provider.acquire("t1", { userId: "bob" });
    expect(await bob.readFile("/mnt/skills/public/report-writing/SKILL.md")).toContain("public body");
    await expect(bob.readFile("/mnt/skills/custom/tidy-notes/templates/summary.md")).rejects.toThrow();
  });
});

describe("VendorSandboxProvider (another vendor's API over this lifecycle)", () => {
  it("checks the vendor key before each acquire, creating nothing without one, and names sandboxes after the vendor", async () => {
    const api = {
      key: undefined as string | undefined,
      requireKey() {
        if (!this.key) throw new AntlerError(ErrorCodes.CONFIG_ENV_MISSING, "no Acme key", { where: "acme config.api_key" });
        return this.key;
      },
    };
    const provider = new VendorSandboxProvider({
      config: e2bConfigSchema.parse({ pool_size: 1 }),
      service: { id: "acme", label: "Acme", createHint: "Check the Acme key." },
      api,
      remote: folder,
      baseDir,
      logger: captureLogs().logger,
    });
    providers.push(provider);

    const err = await provider.acquire("t1", { userId: "u1" }).catch((e: unknown) => e);
    expect(isAntlerError(err, "ANTLER_ERR_CONFIG_ENV_MISSING")).toBe(true);
    expect(folder.liveIds()).toEqual([]);

    api.key = "k";
    const sandbox = await provider.acquire("t1", { userId: "u1" });
    expect(provider.id).toBe("acme");
    expect(sandbox.id).toBe("acme:u1/t1");
    expect(folder.liveIds()).toHaveLength(1);
  });
});
