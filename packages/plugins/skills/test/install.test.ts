import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useTempDirs } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import { SkillCatalog } from "../src/catalog.js";
import { SkillErrorCodes } from "../src/errors.js";
import { installSkillArchive, removeCustomSkill } from "../src/install.js";
import { badArchives, GOOD_SKILL_MD, goodArchive, skillMd, TEST_LIMITS } from "./archives.js";
import { snapshotTree } from "./tree.js";

const temp = useTempDirs();

function setup() {
  const root = temp.tempDir("antler-skills-install-");
  const publicDir = join(root, "dist", "skills", "public");
  mkdirSync(join(publicDir, "report-writing"), { recursive: true });
  writeFileSync(join(publicDir, "report-writing", "SKILL.md"), skillMd("report-writing"));
  const baseDir = join(root, "data");
  return { root, baseDir, catalog: new SkillCatalog({ publicDir, baseDir }) };
}

describe("installing a .skill archive", () => {
  it("writes a valid archive's files under the user's custom folder and lists the skill for that user only", async () => {
    const { baseDir, catalog } = setup();
    const skill = await installSkillArchive(catalog, "alice", goodArchive(), TEST_LIMITS);
    expect(skill).toMatchObject({ name: "tidy-notes", category: "custom", location: "/mnt/skills/custom/tidy-notes/SKILL.md" });
    const dir = join(baseDir, "users", "alice", "skills", "custom", "tidy-notes");
    expect(readFileSync(join(dir, "SKILL.md"), "utf8")).toBe(GOOD_SKILL_MD);
    expect(readFileSync(join(dir, "templates", "summary.md"), "utf8")).toBe("# Summary\n");
    expect(catalog.view("alice").get("tidy-notes")?.allowedTools).toEqual(["read_file", "write_file"]);
    expect(catalog.view("bob").get("tidy-notes")).toBeUndefined();
    // Nothing but the skill folder is left behind (no staging folder).
    expect(snapshotTree(join(baseDir, "users", "alice", "skills"))).toEqual([
      "custom/",
      "custom/tidy-notes/",
      `custom/tidy-notes/SKILL.md (${Buffer.byteLength(GOOD_SKILL_MD)})`,
      "custom/tidy-notes/templates/",
      "custom/tidy-notes/templates/summary.md (10)",
    ]);
  });

  it("refuses a second install of the same name, and a custom skill named like a public one", async () => {
    const { catalog } = setup();
    await installSkillArchive(catalog, "alice", goodArchive(), TEST_LIMITS);
    await expect(installSkillArchive(catalog, "alice", goodArchive(), TEST_LIMITS)).rejects.toMatchObject({ code: SkillErrorCodes.EXISTS });
    const { zipSync, strToU8 } = await import("fflate");
    const shadow = Buffer.from(zipSync({ "SKILL.md": strToU8(skillMd("report-writing")) }));
    await expect(installSkillArchive(catalog, "alice", shadow, TEST_LIMITS)).rejects.toThrow(
      /public skill named "report-writing" already exists/,
    );
  });

  it("removes a custom skill but refuses to remove a public one", async () => {
    const { catalog } = setup();
    await installSkillArchive(catalog, "alice", goodArchive(), TEST_LIMITS);
    removeCustomSkill(catalog, "alice", "tidy-notes");
    expect(catalog.view("alice").get("tidy-notes")).toBeUndefined();
    expect(() => removeCustomSkill(catalog, "alice", "report-writing")).toThrow(/public skill and cannot be removed/);
    expect(() => removeCustomSkill(catalog, "bob", "tidy-notes")).toThrow(/no skill named "tidy-notes"/);
  });

  it.each(badArchives().map((a) => [a.case, a] as const))("refuses %s and writes nothing", async (_name, archive) => {
    const { root, catalog } = setup();
    const before = snapshotTree(root);
    const error = await installSkillArchive(catalog, "alice", archive.bytes, TEST_LIMITS).then(
      () => undefined,
      (err: unknown) => err as Error & { code: string },
    );
    expect(error?.code).toBe(SkillErrorCodes.ARCHIVE_REFUSED);
    expect(error?.message).toMatch(archive.message);
    expect(error?.message).toMatch(/Nothing was installed/);
    expect(snapshotTree(root)).toEqual(before);
  });
});
