import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runKernelCommand } from "@antler/kernel/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Harness, harness, tempDir } from "./helpers.js";

let dir: ReturnType<typeof tempDir>;
let h: Harness;

beforeEach(async () => {
  dir = tempDir();
  h = await harness({ baseDir: dir.path });
});

afterEach(async () => {
  await h.close();
  dir.remove();
});

/** Runs `antler <words...>` against the harness kernel as the CLI does: AntlerErrors become `✖ message` and exit 1. */
const antler = (...argv: string[]) => runKernelCommand(h.client.kernel, argv, { cwd: dir.path });

describe("antler memory", () => {
  it("show, export to a file, clear (only with --yes) and import it back", async () => {
    await h.memory.createFact({ content: "Prefers dark roast coffee", category: "preference" }, { userId: "carol" });
    const shown = await antler("memory", "show", "--user", "carol");
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/Memory of carol[\s\S]*\[preference 0\.70\]\s+Prefers dark roast coffee\s+\(manual\)/);

    expect((await antler("memory", "export", "--user", "carol", "--out", "carol.json")).code).toBe(0);
    const file = JSON.parse(readFileSync(join(dir.path, "carol.json"), "utf8"));
    expect(file.facts.map((f: { content: string }) => f.content)).toEqual(["Prefers dark roast coffee"]);

    const refused = await antler("memory", "clear", "--user", "carol");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--yes/);
    expect((await h.memory.getMemory({ userId: "carol" })).facts).toHaveLength(1);
    expect((await antler("memory", "clear", "--user", "carol", "--yes")).stdout).toMatch(/Cleared the memory of carol/);
    expect((await h.memory.getMemory({ userId: "carol" })).facts).toEqual([]);

    const imported = await antler("memory", "import", "carol.json", "--user", "carol");
    expect(imported.stdout).toMatch(/1 facts now/);
    expect((await antler("memory", "show", "--user", "carol", "--json")).stdout).toContain("Prefers dark roast coffee");
  });

  it("refuses a broken import file and a stray flag with the fix in the message, writing nothing", async () => {
    writeFileSync(join(dir.path, "broken.json"), "{ not json");
    const broken = await antler("memory", "import", "broken.json");
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/cannot read .*broken\.json as JSON/);
    writeFileSync(join(dir.path, "wrong.json"), JSON.stringify({ version: 1, facts: "none" }));
    expect((await antler("memory", "import", "wrong.json")).stderr).toMatch(/the import file is not valid/);
    expect((await antler("memory", "show", "--colour")).stderr).toMatch(/Unknown option '--colour'/);
    expect((await h.memory.getMemory()).facts).toEqual([]);
  });
});
