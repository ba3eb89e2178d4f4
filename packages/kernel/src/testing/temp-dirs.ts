import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach } from "vitest";

export interface TempDirs {
  /** A temp folder outside the repository, removed after the test that made it. */
  tempDir(prefix?: string): string;
  /** Writes `files` (relative path → content) under `root`, creating folders. */
  writeFiles(root: string, files: Record<string, string>): void;
}

/** Temp folders for a test file: call once at its top (or in a shared fixtures module); each is removed after its test. */
export function useTempDirs(): TempDirs {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    tempDir(prefix = "antler-test-") {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    writeFiles(root, files) {
      for (const [rel, content] of Object.entries(files)) {
        const file = join(root, rel);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, content);
      }
    },
  };
}
