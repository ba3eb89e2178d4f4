import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe } from "vitest";
import { batchRoleSuite } from "./batch-role.js";

describe("a batch's authorization role on SQLite", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "antler-batch-role-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  batchRoleSuite(() => ({ storage: { backend: "sqlite" }, baseDir: dir }));
});
