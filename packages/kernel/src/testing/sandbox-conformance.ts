import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ErrorCode, ErrorCodes } from "../errors.js";
import { DEFAULT_USER_ID } from "../paths.js";
import { type FileEntry, SANDBOX_VIRTUAL_ROOTS, type Sandbox, type SandboxProvider } from "../sandbox/types.js";

export interface SandboxConformanceSubject {
  provider: SandboxProvider;
  /** Thread the suite acquires sandboxes for; default `conformance-thread`. */
  threadId?: string;
  /** Default `default`. */
  userId?: string;
}

export interface SandboxConformanceOptions {
  /** A fresh provider. Called once per lifecycle test and once for the shared operations suite. */
  create: () => Promise<SandboxConformanceSubject>;
  /**
   * Cleans up after the latest `create()` (temp folders, servers), once the suite has closed its provider.
   * Calls never interleave: create, close, create, close.
   */
  close?: () => Promise<void>;
  /** Label in the describe title; default the provider's id. */
  name?: string;
  /** Per-test timeout in ms, for providers that talk to a remote VM; default 30 000. */
  timeoutMs?: number;
}

const WS = SANDBOX_VIRTUAL_ROOTS.workspace;
const OUT = SANDBOX_VIRTUAL_ROOTS.outputs;
const UPLOADS = SANDBOX_VIRTUAL_ROOTS.uploads;

/** Every byte value once, then a few invalid UTF-8 sequences, so a text round-trip anywhere would corrupt it. */
function binaryFixture(): Uint8Array {
  const bytes = new Uint8Array(256 + 6);
  for (let i = 0; i < 256; i++) bytes[i] = i;
  bytes.set([0xff, 0xfe, 0xc3, 0x28, 0x80, 0x00], 256);
  return bytes;
}

/** Lines of a read result, ignoring whether the provider keeps the last line's newline. */
function linesOf(text: string): string[] {
  return text.replace(/\r?\n$/, "").split(/\r?\n/);
}

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: unknown }> {
  try {
    await promise;
  } catch (err) {
    return err as Error & { code?: unknown };
  }
  throw new Error("expected the sandbox operation to reject, but it resolved");
}

/** The error's `code` (checked by value, so a second copy of @antler/kernel in a provider's tree still passes). */
async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<Error> {
  const err = await rejection(promise);
  expect(err.code, `expected ${code}, got: ${err.message}`).toBe(code);
  return err;
}

/**
 * The shared suite every sandbox provider passes. It speaks only the `Sandbox`/`SandboxProvider` contract in
 * virtual paths, so an in-process, container or remote-VM provider runs it unchanged:
 *
 * ```ts
 * runSandboxConformance({ create: async () => ({ provider: new MyProvider(...) }), close: cleanup });
 * ```
 */
export function runSandboxConformance(options: SandboxConformanceOptions): void {
  const timeout = options.timeoutMs ?? 30_000;

  describe(`sandbox conformance${options.name ? `: ${options.name}` : ""}`, () => {
    describe("lifecycle", () => {
      let provider: SandboxProvider;
      let threadId: string;
      let userId: string;
      let closed = false;

      beforeEach(async () => {
        const made = await options.create();
        provider = made.provider;
        threadId = made.threadId ?? "conformance-thread";
        userId = made.userId ?? DEFAULT_USER_ID;
        closed = false;
      }, timeout);

      afterEach(async () => {
        if (!closed) await provider.close();
        await options.close?.();
      }, timeout);

      it(
        "acquire returns a sandbox with a stable id for the same (user, thread)",
        async () => {
          const a = await provider.acquire(threadId, { userId });
          const b = await provider.acquire(threadId, { userId });
          expect(typeof a.id).toBe("string");
          expect(a.id.length).toBeGreaterThan(0);
          expect(b.id).toBe(a.id);
        },
        timeout,
      );

      it(
        "another thread gets another sandbox",
        async () => {
          const a = await provider.acquire(threadId, { userId });
          const b = await provider.acquire(`${threadId}-other`, { userId });
          expect(b.id).not.toBe(a.id);
        },
        timeout,
      );

      it(
        "another user with the same thread id gets another sandbox and cannot see its files",
        async () => {
          const mine = await provider.acquire(threadId, { userId });
          const theirs = await provider.acquire(threadId, { userId: `${userId}-other` });
          expect(theirs.id).not.toBe(mine.id);
          await mine.writeFile(`${WS}/conformance-private.txt`, "mine");
          await rejection(theirs.readFile(`${WS}/conformance-private.txt`));
        },
        timeout,
      );

      it(
        "get(id) finds an acquired sandbox and nothing for an unknown id",
        async () => {
          const a = await provider.acquire(threadId, { userId });
          expect(provider.get(a.id)?.id).toBe(a.id);
          expect(provider.get(`${a.id}-no-such-sandbox`)).toBeUndefined();
        },
        timeout,
      );

      it(
        "release then acquire hands back a working sandbox with the same id",
        async () => {
          const a = await provider.acquire(threadId, { userId });
          await provider.release(a.id);
          const b = await provider.acquire(threadId, { userId });
          expect(b.id).toBe(a.id);
          const result = await b.executeCommand("echo again");
          expect(result.exitCode).toBe(0);
          expect(result.stdout.trim()).toBe("again");
        },
        timeout,
      );

      it(
        "reset drops every sandbox, and acquire works afterwards",
        async () => {
          const a = await provider.acquire(threadId, { userId });
          const b = await provider.acquire(`${threadId}-other`, { userId });
          await provider.reset();
          expect(provider.get(a.id)).toBeUndefined();
          expect(provider.get(b.id)).toBeUndefined();
          const again = await provider.acquire(threadId, { userId });
          expect(again.id).toBe(a.id);
          expect(provider.get(again.id)?.id).toBe(a.id);
        },
        timeout,
      );

      it(
        "close resolves and leaves no live sandbox behind",
        async () => {
          const a = await provider.acquire(threadId, { userId });
          await provider.close();
          closed = true;
          expect(provider.get(a.id)).toBeUndefined();
        },
        timeout,
      );
    });

    describe("operations", () => {
      let provider: SandboxProvider;
      let sandbox: Sandbox;

      beforeAll(async () => {
        const made = await options.create();
        provider = made.provider;
        sandbox = await provider.acquire(made.threadId ?? "conformance-thread", { userId: made.userId ?? DEFAULT_USER_ID });
      }, timeout);

      afterAll(async () => {
        await provider?.close();
        await options.close?.();
      }, timeout);

      describe("exec", () => {
        it(
          "captures stdout, stderr and a non-zero exit code without throwing",
          async () => {
            const result = await sandbox.executeCommand("echo out; echo err >&2; exit 3");
            expect(result.stdout.trim()).toBe("out");
            expect(result.stderr.trim()).toBe("err");
            expect(result.exitCode).toBe(3);
            expect(result.timedOut).toBe(false);
            expect(result.signal).toBeNull();
            expect(result.durationMs).toBeGreaterThanOrEqual(0);
          },
          timeout,
        );

        it(
          "reports exit code 0 for a successful command",
          async () => {
            const result = await sandbox.executeCommand("true");
            expect(result.exitCode).toBe(0);
          },
          timeout,
        );

        it(
          "makes the env option visible to the command",
          async () => {
            const result = await sandbox.executeCommand('printf "%s" "$ANTLER_CONFORMANCE_VALUE"', {
              env: { ANTLER_CONFORMANCE_VALUE: "hello env" },
            });
            expect(result.stdout).toBe("hello env");
          },
          timeout,
        );

        it(
          "runs in the workspace by default and reports it as its virtual path",
          async () => {
            const result = await sandbox.executeCommand("pwd");
            expect(result.stdout.trim()).toBe(WS);
          },
          timeout,
        );

        it(
          "honours a virtual cwd",
          async () => {
            const result = await sandbox.executeCommand("pwd", { cwd: OUT });
            expect(result.stdout.trim()).toBe(OUT);
          },
          timeout,
        );

        it(
          "understands virtual paths in the command text",
          async () => {
            const dir = `${WS}/conformance-exec`;
            const result = await sandbox.executeCommand(`mkdir -p ${dir} && printf made > ${dir}/made.txt`);
            expect(result.exitCode).toBe(0);
            expect(await sandbox.readFile(`${dir}/made.txt`)).toBe("made");
          },
          timeout,
        );

        it(
          "a timeout ends the command with timedOut true and its background process gone",
          async () => {
            const pidFile = `${WS}/conformance-timeout.pid`;
            const started = Date.now();
            const result = await sandbox.executeCommand(`sleep 30 & echo $! > ${pidFile}; wait`, { timeout: 500 });
            expect(result.timedOut).toBe(true);
            expect(Date.now() - started).toBeLessThan(15_000);
            const pid = (await sandbox.readFile(pidFile)).trim();
            expect(pid).toMatch(/^\d+$/);
            // A killed process may linger as a zombie until its new parent reaps it; that counts as gone.
            const probe = `if kill -0 ${pid} 2>/dev/null && ! grep -qs '^State:[[:space:]]*Z' /proc/${pid}/status; then echo alive; else echo gone; fi`;
            let state = "";
            for (let i = 0; i < 50; i++) {
              state = (await sandbox.executeCommand(probe)).stdout.trim();
              if (state === "gone") break;
              await new Promise((r) => setTimeout(r, 100));
            }
            expect(state).toBe("gone");
          },
          timeout,
        );
      });

      describe("read & write", () => {
        const dir = `${WS}/conformance-rw`;

        it(
          "reads back exactly what was written, creating missing folders",
          async () => {
            const text = "first line\nzweite Zeile — ü ✓\n\ttabbed\n";
            await sandbox.writeFile(`${dir}/nested/deeper/text.txt`, text);
            expect(await sandbox.readFile(`${dir}/nested/deeper/text.txt`)).toBe(text);
          },
          timeout,
        );

        it(
          "appends with append: true",
          async () => {
            await sandbox.writeFile(`${dir}/append.txt`, "a\n");
            await sandbox.writeFile(`${dir}/append.txt`, "b\n", { append: true });
            expect(await sandbox.readFile(`${dir}/append.txt`)).toBe("a\nb\n");
          },
          timeout,
        );

        it(
          "slices lines with startLine and endLine (1-based, inclusive)",
          async () => {
            await sandbox.writeFile(`${dir}/lines.txt`, "l1\nl2\nl3\nl4\nl5\n");
            expect(linesOf(await sandbox.readFile(`${dir}/lines.txt`, { startLine: 2, endLine: 4 }))).toEqual(["l2", "l3", "l4"]);
            expect(linesOf(await sandbox.readFile(`${dir}/lines.txt`, { startLine: 4 }))).toEqual(["l4", "l5"]);
            expect(linesOf(await sandbox.readFile(`${dir}/lines.txt`, { endLine: 2 }))).toEqual(["l1", "l2"]);
          },
          timeout,
        );

        it(
          "round-trips non-UTF-8 bytes through updateFile and downloadFile",
          async () => {
            const bytes = binaryFixture();
            await sandbox.updateFile(`${dir}/blob.bin`, bytes);
            const back = await sandbox.downloadFile(`${dir}/blob.bin`);
            expect(back.byteLength).toBe(bytes.byteLength);
            expect(Buffer.compare(Buffer.from(back), Buffer.from(bytes))).toBe(0);
          },
          timeout,
        );

        it(
          "downloadFile returns the UTF-8 bytes of a written text file",
          async () => {
            await sandbox.writeFile(`${dir}/utf8.txt`, "ü✓");
            const back = await sandbox.downloadFile(`${dir}/utf8.txt`);
            expect(Buffer.from(back).toString("utf8")).toBe("ü✓");
          },
          timeout,
        );

        it(
          "a file written into outputs is what a command sees there",
          async () => {
            await sandbox.writeFile(`${OUT}/conformance-report.txt`, "from writeFile");
            const result = await sandbox.executeCommand(`cat ${OUT}/conformance-report.txt`);
            expect(result.stdout).toBe("from writeFile");
          },
          timeout,
        );

        it(
          "writes and reads under uploads",
          async () => {
            await sandbox.writeFile(`${UPLOADS}/conformance-upload.txt`, "uploaded");
            expect(await sandbox.readFile(`${UPLOADS}/conformance-upload.txt`)).toBe("uploaded");
          },
          timeout,
        );
      });

      describe("edit", () => {
        it(
          "writing over an existing file replaces its whole content",
          async () => {
            const file = `${WS}/conformance-edit/file.txt`;
            await sandbox.writeFile(file, "a long original content\nwith two lines\n");
            await sandbox.writeFile(file, "short");
            expect(await sandbox.readFile(file)).toBe("short");
          },
          timeout,
        );

        it(
          "updateFile over an existing file replaces its bytes",
          async () => {
            const file = `${WS}/conformance-edit/bytes.bin`;
            await sandbox.updateFile(file, new Uint8Array([1, 2, 3, 4, 5, 6]));
            await sandbox.updateFile(file, new Uint8Array([9]));
            expect(Array.from(await sandbox.downloadFile(file))).toEqual([9]);
          },
          timeout,
        );
      });

      describe("list", () => {
        const dir = `${WS}/conformance-list`;
        const byPath = (entries: FileEntry[]) => new Map(entries.map((e) => [e.path.replace(/\/$/, ""), e]));

        beforeAll(async () => {
          await sandbox.writeFile(`${dir}/a.txt`, "12345");
          await sandbox.writeFile(`${dir}/sub/b.txt`, "b");
          await sandbox.writeFile(`${dir}/sub/deeper/c.txt`, "c");
        }, timeout);

        it(
          "depth 1 lists direct children as virtual paths with their types and sizes",
          async () => {
            const entries = byPath(await sandbox.listDir(dir, 1));
            expect([...entries.keys()].sort()).toEqual([`${dir}/a.txt`, `${dir}/sub`]);
            expect(entries.get(`${dir}/a.txt`)?.type).toBe("file");
            expect(entries.get(`${dir}/a.txt`)?.size).toBe(5);
            expect(entries.get(`${dir}/sub`)?.type).toBe("directory");
          },
          timeout,
        );

        it(
          "depth 2 adds grandchildren and stops there",
          async () => {
            const entries = byPath(await sandbox.listDir(dir, 2));
            expect([...entries.keys()].sort()).toEqual([`${dir}/a.txt`, `${dir}/sub`, `${dir}/sub/b.txt`, `${dir}/sub/deeper`]);
            expect(entries.get(`${dir}/sub/deeper`)?.type).toBe("directory");
            expect(entries.get(`${dir}/sub/b.txt`)?.type).toBe("file");
          },
          timeout,
        );
      });

      describe("glob and grep", () => {
        const gdir = `${WS}/conformance-glob`;
        const rdir = `${WS}/conformance-grep`;
        const where = (matches: { path: string; line: number }[]) => matches.map((m) => `${m.path}:${m.line}`).sort();

        beforeAll(async () => {
          await sandbox.writeFile(`${gdir}/a.ts`, "a");
          await sandbox.writeFile(`${gdir}/b.js`, "b");
          await sandbox.writeFile(`${gdir}/sub/c.ts`, "c");
          await sandbox.writeFile(`${gdir}/sub/d.md`, "d");
          await sandbox.writeFile(`${rdir}/one.txt`, "alpha\nBeta\ngamma alpha\n");
          await sandbox.writeFile(`${rdir}/two.md`, "alpha beta\n");
          await sandbox.writeFile(`${rdir}/three.txt`, "ALPHA\n");
        }, timeout);

        it(
          "glob matches a recursive pattern relative to the given folder, as virtual paths",
          async () => {
            expect((await sandbox.glob("**/*.ts", { path: gdir })).sort()).toEqual([`${gdir}/a.ts`, `${gdir}/sub/c.ts`]);
          },
          timeout,
        );

        it(
          "glob without ** stays in the folder",
          async () => {
            expect(await sandbox.glob("*.ts", { path: gdir })).toEqual([`${gdir}/a.ts`]);
          },
          timeout,
        );

        it(
          "glob defaults to the workspace",
          async () => {
            expect(await sandbox.glob("conformance-glob/sub/*.md")).toEqual([`${gdir}/sub/d.md`]);
          },
          timeout,
        );

        it(
          "glob honours maxResults",
          async () => {
            const hits = await sandbox.glob("**/*", { path: gdir, maxResults: 2 });
            expect(hits).toHaveLength(2);
          },
          timeout,
        );

        it(
          "grep finds matching lines with 1-based line numbers and their text, case-sensitive by default",
          async () => {
            const matches = await sandbox.grep("alpha", { path: rdir });
            expect(where(matches)).toEqual([`${rdir}/one.txt:1`, `${rdir}/one.txt:3`, `${rdir}/two.md:1`]);
            expect(matches.find((m) => m.path === `${rdir}/one.txt` && m.line === 3)?.text.trim()).toBe("gamma alpha");
          },
          timeout,
        );

        it(
          "grep treats the pattern as a regular expression",
          async () => {
            expect(where(await sandbox.grep("^gam+a\\s", { path: rdir }))).toEqual([`${rdir}/one.txt:3`]);
          },
          timeout,
        );

        it(
          "grep with ignoreCase matches across case",
          async () => {
            const matches = await sandbox.grep("alpha", { path: rdir, ignoreCase: true });
            expect(where(matches)).toEqual([`${rdir}/one.txt:1`, `${rdir}/one.txt:3`, `${rdir}/three.txt:1`, `${rdir}/two.md:1`]);
          },
          timeout,
        );

        it(
          "grep stops at maxMatches",
          async () => {
            expect(await sandbox.grep("alpha", { path: rdir, ignoreCase: true, maxMatches: 2 })).toHaveLength(2);
          },
          timeout,
        );

        it(
          "grep with a glob filter searches only matching files",
          async () => {
            expect(where(await sandbox.grep("alpha", { path: rdir, glob: "*.md" }))).toEqual([`${rdir}/two.md:1`]);
          },
          timeout,
        );
      });

      describe("errors", () => {
        it(
          "reading a missing file rejects with a message naming the path",
          async () => {
            const missing = `${WS}/conformance-no-such-file.txt`;
            const err = await rejection(sandbox.readFile(missing));
            expect(err.message).toContain(missing);
          },
          timeout,
        );

        it(
          "writing outside the virtual roots rejects with PATH_UNSAFE",
          async () => {
            await expectCode(sandbox.writeFile("/etc/antler-conformance.txt", "x"), ErrorCodes.PATH_UNSAFE);
            await expectCode(sandbox.writeFile("/mnt/elsewhere/x.txt", "x"), ErrorCodes.PATH_UNSAFE);
            await expectCode(sandbox.updateFile("/tmp/antler-conformance.bin", new Uint8Array([1])), ErrorCodes.PATH_UNSAFE);
          },
          timeout,
        );

        it(
          "writing under /mnt/skills or /mnt/acp-workspace rejects with SANDBOX_PATH_READ_ONLY",
          async () => {
            await expectCode(sandbox.writeFile(`${SANDBOX_VIRTUAL_ROOTS.skills}/public/x.md`, "x"), ErrorCodes.SANDBOX_PATH_READ_ONLY);
            await expectCode(sandbox.writeFile(`${SANDBOX_VIRTUAL_ROOTS.acpWorkspace}/x.txt`, "x"), ErrorCodes.SANDBOX_PATH_READ_ONLY);
            await expectCode(
              sandbox.updateFile(`${SANDBOX_VIRTUAL_ROOTS.skills}/x.bin`, new Uint8Array([1])),
              ErrorCodes.SANDBOX_PATH_READ_ONLY,
            );
          },
          timeout,
        );

        it(
          "paths that climb out of a root with .. are rejected with PATH_UNSAFE",
          async () => {
            await expectCode(sandbox.writeFile(`${WS}/../../../../etc/antler-conformance.txt`, "x"), ErrorCodes.PATH_UNSAFE);
            await expectCode(sandbox.readFile(`${WS}/../../../../etc/passwd`), ErrorCodes.PATH_UNSAFE);
            await expectCode(sandbox.writeFile("/mnt/user-data/../../etc/antler-conformance.txt", "x"), ErrorCodes.PATH_UNSAFE);
          },
          timeout,
        );
      });
    });
  });
}
