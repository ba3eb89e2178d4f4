import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorCodes, type Sandbox, threadPaths } from "@antler/kernel";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GREP_MAX_FILE_BYTES, LocalSandboxProvider } from "../src/index.js";

const WS = "/mnt/user-data/workspace";

describe("local sandbox glob, grep, listDir and read details", () => {
  let baseDir: string;
  let provider: LocalSandboxProvider;
  let sandbox: Sandbox;

  beforeEach(async () => {
    baseDir = await mkdtemp(join(tmpdir(), "antler-local-search-"));
    provider = new LocalSandboxProvider({ baseDir });
    sandbox = await provider.acquire("t", { userId: "default" });
    await sandbox.writeFile(`${WS}/src/a.ts`, "export const needle = 1;\n");
    await sandbox.writeFile(`${WS}/src/deep/b.ts`, "// needle in a deep file\n");
    await sandbox.writeFile(`${WS}/src/c.md`, "needle in markdown\n");
    await sandbox.writeFile(`${WS}/node_modules/dep/index.ts`, "needle in a dependency\n");
  });

  afterEach(async () => {
    await provider.close();
    await rm(baseDir, { recursive: true, force: true });
  });

  it("grep's glob filter without a slash matches file names at any depth", async () => {
    const matches = await sandbox.grep("needle", { path: `${WS}/src`, glob: "*.ts" });
    expect(matches.map((m) => m.path).sort()).toEqual([`${WS}/src/a.ts`, `${WS}/src/deep/b.ts`]);
  });

  it("grep skips node_modules, binary files and files over the size bound", async () => {
    const host = threadPaths(baseDir, "default", "t").workspace;
    await writeFile(join(host, "src", "bin.dat"), Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x00, 0x01]));
    await writeFile(join(host, "src", "huge.txt"), `needle\n${"x".repeat(GREP_MAX_FILE_BYTES)}`);
    const paths = (await sandbox.grep("needle")).map((m) => m.path).sort();
    expect(paths).toEqual([`${WS}/src/a.ts`, `${WS}/src/c.md`, `${WS}/src/deep/b.ts`]);
  });

  it("grep searches a single file when path is a file", async () => {
    expect(await sandbox.grep("needle", { path: `${WS}/src/c.md` })).toEqual([
      { path: `${WS}/src/c.md`, line: 1, text: "needle in markdown" },
    ]);
  });

  it("grep rejects an invalid regular expression with a coded error", async () => {
    await expect(sandbox.grep("(unclosed")).rejects.toMatchObject({ code: ErrorCodes.SANDBOX_EXEC_FAILED });
  });

  it("glob accepts an absolute pattern inside the search folder", async () => {
    expect(await sandbox.glob(`${WS}/src/*.md`)).toEqual([`${WS}/src/c.md`]);
  });

  it("glob of a folder under read-only /mnt/skills returns /mnt/skills paths", async () => {
    await mkdir(join(baseDir, "skills", "public", "demo"), { recursive: true });
    await writeFile(join(baseDir, "skills", "public", "demo", "SKILL.md"), "# demo");
    expect(await sandbox.glob("**/SKILL.md", { path: "/mnt/skills" })).toEqual(["/mnt/skills/public/demo/SKILL.md"]);
  });

  it("listDir of /mnt/user-data shows the three folders; writing there is refused", async () => {
    const entries = await sandbox.listDir("/mnt/user-data", 1);
    expect(entries.map((e) => e.path).sort()).toEqual(["/mnt/user-data/outputs", "/mnt/user-data/uploads", "/mnt/user-data/workspace"]);
    await expect(sandbox.writeFile("/mnt/user-data", "x")).rejects.toMatchObject({ code: ErrorCodes.PATH_UNSAFE });
  });

  it("reading a missing file is SANDBOX_NOT_FOUND with the virtual path and no host path", async () => {
    const err = await sandbox.readFile(`${WS}/missing.txt`).catch((e: unknown) => e as Error & { code?: string });
    expect(err).toMatchObject({ code: ErrorCodes.SANDBOX_NOT_FOUND });
    expect((err as Error).message).toContain(`${WS}/missing.txt`);
    expect((err as Error).message).not.toContain(baseDir);
  });

  it("rejects startLine 0 instead of guessing", async () => {
    await expect(sandbox.readFile(`${WS}/src/a.ts`, { startLine: 0 })).rejects.toMatchObject({ code: ErrorCodes.SANDBOX_EXEC_FAILED });
  });
});
