import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { type ErrorCode, ErrorCodes, type Sandbox, threadPaths } from "@antler/kernel";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LocalSandboxProvider } from "../src/index.js";

const WS = "/mnt/user-data/workspace";
const UNSAFE = ErrorCodes.PATH_UNSAFE;
const READ_ONLY = ErrorCodes.SANDBOX_PATH_READ_ONLY;

/** Every path under `dir`, relative, sorted: the before/after evidence that nothing was written anywhere. */
async function snapshot(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for (const entry of await readdir(d, { withFileTypes: true })) {
      const full = join(d, entry.name);
      out.push(`${relative(dir, full)}${entry.isDirectory() ? "/" : ""}`);
      if (entry.isDirectory()) await walk(full);
    }
  };
  await walk(dir);
  return out.sort();
}

interface Ctx {
  sandbox: Sandbox;
  root: string;
  workspaceHost: string;
}

interface Attempt {
  name: string;
  code: ErrorCode;
  run: (ctx: Ctx) => Promise<unknown>;
  /** What the error message must quote; default the path's opening characters. */
  names?: string;
}

const write = (path: string) => (c: Ctx) => c.sandbox.writeFile(path, "pwned");
const attempts: Array<Attempt & { path: string | ((c: Ctx) => string) }> = [
  {
    name: "workspace/../../../../etc",
    path: `${WS}/../../../../etc/antler-evil`,
    code: UNSAFE,
    run: write(`${WS}/../../../../etc/antler-evil`),
  },
  { name: ".. that would land in another root", path: `${WS}/../outputs/x.txt`, code: UNSAFE, run: write(`${WS}/../outputs/x.txt`) },
  {
    name: "/mnt/user-data/../../etc",
    path: "/mnt/user-data/../../etc/antler-evil",
    code: UNSAFE,
    run: write("/mnt/user-data/../../etc/antler-evil"),
  },
  { name: "deep sub/../../../", path: `${WS}/sub/../../../../x`, code: UNSAFE, run: write(`${WS}/sub/../../../../x`) },
  { name: "./ then ..", path: `${WS}/./../../x`, code: UNSAFE, run: write(`${WS}/./../../x`) },
  { name: "relative ../", path: "../escape.txt", code: UNSAFE, run: write("../escape.txt") },
  { name: "relative plain name", path: "plain.txt", code: UNSAFE, run: write("plain.txt") },
  { name: "read /etc/passwd", path: "/etc/passwd", code: UNSAFE, run: (c) => c.sandbox.readFile("/etc/passwd") },
  { name: "write /etc", path: "/etc/antler-evil", code: UNSAFE, run: write("/etc/antler-evil") },
  {
    name: "absolute host path of the temp dir",
    path: (c) => join(c.root, "outside", "evil.txt"),
    code: UNSAFE,
    run: (c) => c.sandbox.writeFile(join(c.root, "outside", "evil.txt"), "pwned"),
  },
  {
    name: "absolute host path of the workspace itself",
    path: (c) => join(c.workspaceHost, "x.txt"),
    code: UNSAFE,
    run: (c) => c.sandbox.writeFile(join(c.workspaceHost, "x.txt"), "pwned"),
  },
  {
    name: "write through a symlinked folder pointing outside",
    path: `${WS}/link-out/evil.txt`,
    code: UNSAFE,
    run: write(`${WS}/link-out/evil.txt`),
  },
  {
    name: "read through a symlinked folder pointing outside",
    path: `${WS}/link-out/secret.txt`,
    code: UNSAFE,
    run: (c) => c.sandbox.readFile(`${WS}/link-out/secret.txt`),
  },
  { name: "overwrite an outside file through a file symlink", path: `${WS}/file-link`, code: UNSAFE, run: write(`${WS}/file-link`) },
  {
    name: "download an outside file through a file symlink",
    path: `${WS}/file-link`,
    code: UNSAFE,
    run: (c) => c.sandbox.downloadFile(`${WS}/file-link`),
  },
  { name: "create through a dangling symlink", path: `${WS}/dangling`, code: UNSAFE, run: write(`${WS}/dangling`) },
  {
    name: "updateFile through a symlinked folder",
    path: `${WS}/link-out/evil.bin`,
    code: UNSAFE,
    run: (c) => c.sandbox.updateFile(`${WS}/link-out/evil.bin`, new Uint8Array([1])),
  },
  { name: "listDir of a symlinked folder", path: `${WS}/link-out`, code: UNSAFE, run: (c) => c.sandbox.listDir(`${WS}/link-out`) },
  {
    name: "glob rooted in a symlinked folder",
    path: `${WS}/link-out`,
    code: UNSAFE,
    run: (c) => c.sandbox.glob("*", { path: `${WS}/link-out` }),
  },
  { name: "glob pattern climbing with ..", path: "../../*", code: UNSAFE, run: (c) => c.sandbox.glob("../../*") },
  { name: "glob pattern with .. in braces", path: "{..,x}/*", code: UNSAFE, run: (c) => c.sandbox.glob("{..,x}/*") },
  { name: "grep in /etc", path: "/etc", code: UNSAFE, run: (c) => c.sandbox.grep("root", { path: "/etc" }) },
  {
    name: "exec cwd through a symlinked folder",
    path: `${WS}/link-out`,
    code: UNSAFE,
    run: (c) => c.sandbox.executeCommand("touch evil", { cwd: `${WS}/link-out` }),
  },
  { name: "URL-encoded ../", path: `${WS}/%2e%2e%2f%2e%2e%2fetc/evil`, code: UNSAFE, run: write(`${WS}/%2e%2e%2f%2e%2e%2fetc/evil`) },
  { name: "URL-encoded slash", path: `${WS}%2F..%2F..%2Fetc`, code: UNSAFE, run: write(`${WS}%2F..%2F..%2Fetc`) },
  { name: "double URL-encoding", path: `${WS}/%252e%252e/evil`, code: UNSAFE, run: write(`${WS}/%252e%252e/evil`) },
  { name: "overlong UTF-8 dots", path: `${WS}/%c0%ae%c0%ae/evil`, code: UNSAFE, run: write(`${WS}/%c0%ae%c0%ae/evil`) },
  { name: "NUL byte", path: `${WS}/a\0.txt`, code: UNSAFE, run: write(`${WS}/a\0/../../../etc/evil`) },
  { name: "newline in a name", path: `${WS}/a\nb`, code: UNSAFE, run: write(`${WS}/a\nb`) },
  { name: "very long path", path: `${WS}/${"a/".repeat(3000)}`, code: UNSAFE, run: write(`${WS}/${"a/".repeat(3000)}x`) },
  { name: "backslashes", path: `${WS}\\..\\..\\etc\\evil`, code: UNSAFE, run: write(`${WS}\\..\\..\\etc\\evil`) },
  {
    name: "prefix trick workspacefoo",
    path: "/mnt/user-data/workspacefoo/evil",
    code: UNSAFE,
    run: write("/mnt/user-data/workspacefoo/evil"),
  },
  { name: "file directly under /mnt/user-data", path: "/mnt/user-data/evil.txt", code: UNSAFE, run: write("/mnt/user-data/evil.txt") },
  { name: "unknown /mnt root", path: "/mnt/other/evil.txt", code: UNSAFE, run: write("/mnt/other/evil.txt") },
  {
    name: "skills then .. into user-data",
    path: "/mnt/skills/../user-data/workspace/x",
    code: UNSAFE,
    run: write("/mnt/skills/../user-data/workspace/x"),
  },
  {
    name: "write under read-only /mnt/skills",
    path: "/mnt/skills/public/evil.md",
    code: READ_ONLY,
    run: write("/mnt/skills/public/evil.md"),
  },
  {
    name: "write under read-only /mnt/acp-workspace",
    path: "/mnt/acp-workspace/evil.txt",
    code: READ_ONLY,
    run: write("/mnt/acp-workspace/evil.txt"),
  },
  {
    name: "append under read-only /mnt/skills",
    path: "/mnt/skills/existing.md",
    code: READ_ONLY,
    run: (c) => c.sandbox.writeFile("/mnt/skills/existing.md", "more", { append: true }),
  },
];

describe("local sandbox refuses every path escape", () => {
  let root: string;
  let provider: LocalSandboxProvider;
  let ctx: Ctx;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "antler-local-escape-"));
    const baseDir = join(root, "base");
    await mkdir(join(root, "outside"), { recursive: true });
    await writeFile(join(root, "outside", "secret.txt"), "top secret");
    await mkdir(join(baseDir, "skills"), { recursive: true });
    await writeFile(join(baseDir, "skills", "existing.md"), "skill");
    provider = new LocalSandboxProvider({ baseDir });
    const sandbox = await provider.acquire("escape-thread", { userId: "mallory" });
    const workspaceHost = threadPaths(baseDir, "mallory", "escape-thread").workspace;
    await symlink(join(root, "outside"), join(workspaceHost, "link-out"));
    await symlink(join(root, "outside", "secret.txt"), join(workspaceHost, "file-link"));
    await symlink(join(root, "outside", "not-yet.txt"), join(workspaceHost, "dangling"));
    ctx = { sandbox, root, workspaceHost };
  });

  afterEach(async () => {
    await provider.close();
    await rm(root, { recursive: true, force: true });
  });

  it(`has at least 20 attempts in the table (${attempts.length})`, () => {
    expect(attempts.length).toBeGreaterThanOrEqual(20);
  });

  for (const attempt of attempts) {
    it(`refuses ${attempt.name} with ${attempt.code.replace("ANTLER_ERR_", "")}, naming the path, writing nothing`, async () => {
      const before = await snapshot(root);
      const err = await attempt.run(ctx).then(
        () => undefined,
        (e: unknown) => e as Error & { code?: string; hint?: string },
      );
      expect(err, "the operation must reject").toBeDefined();
      expect(err?.code).toBe(attempt.code);
      const path = typeof attempt.path === "function" ? attempt.path(ctx) : attempt.path;
      expect(err?.message).toContain(JSON.stringify(path).slice(1, 25));
      if (attempt.code === UNSAFE) expect(err?.hint).toContain("/mnt/user-data/workspace");
      // No host path leaks into what the agent sees, except when the agent itself typed one.
      if (!path.startsWith(root)) expect(err?.message).not.toContain(root);
      expect(await snapshot(root)).toEqual(before);
      expect(await readFile(join(root, "outside", "secret.txt"), "utf8")).toBe("top secret");
    });
  }

  it("still allows what is inside: a symlink to another workspace folder, '.' segments, doubled slashes, a plain % in a name", async () => {
    await mkdir(join(ctx.workspaceHost, "real"), { recursive: true });
    await symlink(join(ctx.workspaceHost, "real"), join(ctx.workspaceHost, "alias"));
    await ctx.sandbox.writeFile(`${WS}/alias/through-link.txt`, "ok");
    expect(await readFile(join(ctx.workspaceHost, "real", "through-link.txt"), "utf8")).toBe("ok");
    await ctx.sandbox.writeFile(`${WS}/./real//dots.txt`, "dots");
    expect(await ctx.sandbox.readFile(`${WS}/real/dots.txt`)).toBe("dots");
    await ctx.sandbox.writeFile(`${WS}/50%off.txt`, "sale");
    expect(await ctx.sandbox.readFile(`${WS}/50%off.txt`)).toBe("sale");
    expect(await ctx.sandbox.readFile("/mnt/skills/existing.md")).toBe("skill");
  });

  it("lists a symlink pointing outside as a symlink without entering it", async () => {
    const entries = await ctx.sandbox.listDir(WS, 3);
    const link = entries.find((e) => e.path === `${WS}/link-out`);
    expect(link?.type).toBe("symlink");
    expect(entries.some((e) => e.path.startsWith(`${WS}/link-out/`))).toBe(false);
  });

  it("grep skips symlinked files so it cannot read outside", async () => {
    expect(await ctx.sandbox.grep("top secret", { path: WS })).toEqual([]);
  });

  it("refuses unsafe user and thread ids at acquire", async () => {
    for (const [thread, user] of [
      ["../other", "mallory"],
      ["ok", "../../root"],
      ["a/b", "mallory"],
      ["", "mallory"],
    ] as const) {
      await expect(provider.acquire(thread, { userId: user })).rejects.toMatchObject({ code: UNSAFE });
    }
    expect(await snapshot(root)).not.toContain("base/users/root/");
  });
});
