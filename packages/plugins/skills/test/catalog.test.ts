import { mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runPluginConformance } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import { SkillCatalog } from "../src/catalog.js";
import { parseSkillFile } from "../src/frontmatter.js";
import skillsPlugin from "../src/index.js";
import { skillMd } from "./archives.js";
import { temp } from "./fixtures.js";

function catalogWith(skills: Record<string, string>, options: { disabled?: string[] } = {}) {
  const root = temp.tempDir("antler-skills-catalog-");
  const publicDir = join(root, "skills", "public");
  for (const [folder, text] of Object.entries(skills)) {
    mkdirSync(join(publicDir, folder), { recursive: true });
    writeFileSync(join(publicDir, folder, "SKILL.md"), text);
  }
  const catalog = new SkillCatalog({ publicDir, baseDir: join(root, "data"), disabledByDefault: options.disabled ?? [] });
  return { root, publicDir, catalog };
}

describe("SKILL.md frontmatter", () => {
  it("parses every allowed key; allowed-tools as a list or a comma/space string; required-secrets as names or objects", () => {
    const { manifest, body } = parseSkillFile(
      "---\nname: a-b\ndescription: Does a.\nlicense: MIT\nversion: 2\nauthor: Ann\nallowed-tools: web_search, write_file  read_file\nrequired-secrets: [API_KEY, { name: OTHER, optional: true }]\nmetadata: { team: x }\n---\n# Body\n",
      "a-b/SKILL.md",
    );
    expect(manifest).toEqual({
      name: "a-b",
      description: "Does a.",
      license: "MIT",
      version: "2",
      author: "Ann",
      allowedTools: ["web_search", "write_file", "read_file"],
      requiredSecrets: [
        { name: "API_KEY", optional: false },
        { name: "OTHER", optional: true },
      ],
      metadata: { team: "x" },
    });
    expect(body).toBe("# Body\n");
  });

  it.each([
    [
      "an unknown key, with its line and a suggestion",
      "---\nname: a\ndescription: d\nlicence: MIT\n---\n",
      /x\/SKILL\.md:4: unknown frontmatter key "licence" \(did you mean "license"\?\)/,
    ],
    ["a missing description", "---\nname: a\n---\n", /no "description"/],
    [
      "a wildcard in allowed-tools",
      "---\nname: a\ndescription: d\nallowed-tools: [mcp_*]\n---\n",
      /x\/SKILL\.md:4: "allowed-tools" entry "mcp_\*" is not a tool name/,
    ],
    ["a YAML error, with its line", "---\nname: a\ndescription: d\nallowed-tools: [a,\n---\n", /not valid YAML/],
    ["an unclosed frontmatter", "---\nname: a\ndescription: d\n", /not closed/],
    ["a duplicate key", "---\nname: a\nname: b\ndescription: d\n---\n", /not valid YAML/],
  ])("refuses %s", (_case, text, message) => {
    expect(() => parseSkillFile(text, "x/SKILL.md")).toThrow(message);
  });
});

describe("the skill catalog", () => {
  it("reports a broken skill with its reason and keeps the others", () => {
    const { catalog } = catalogWith({
      good: skillMd("good"),
      broken: "---\nname: broken\ndescriptio: typo\n---\n",
      mismatch: skillMd("other"),
      empty: "",
    });
    const view = catalog.view("alice");
    expect(view.skills.map((s) => s.name)).toEqual(["good"]);
    expect(Object.fromEntries(view.issues.map((i) => [i.folder, i.message]))).toEqual({
      broken: expect.stringMatching(/SKILL\.md:3: unknown frontmatter key "descriptio" \(did you mean "description"\?\)/),
      empty: expect.stringMatching(/does not start with a YAML frontmatter/),
      mismatch: expect.stringMatching(/names the skill "other" but its folder is "mismatch"/),
    });
  });

  it("enable state: the config default, then each user's own override, which never reaches another user", () => {
    const { catalog } = catalogWith({ a: skillMd("a"), b: skillMd("b") }, { disabled: ["b"] });
    expect(catalog.view("alice").enabled.map((s) => s.name)).toEqual(["a"]);
    catalog.setEnabled("alice", "b", true);
    catalog.setEnabled("alice", "a", false);
    expect(catalog.view("alice").enabled.map((s) => s.name)).toEqual(["b"]);
    expect(catalog.view("bob").enabled.map((s) => s.name)).toEqual(["a"]);
    // A fresh catalog (another process) reads the same overrides from disk.
    const again = new SkillCatalog({ publicDir: catalog.publicDir, baseDir: catalog.baseDir, disabledByDefault: ["b"] });
    expect(again.view("alice").enabled.map((s) => s.name)).toEqual(["b"]);
    expect(() => catalog.setEnabled("alice", "nope", true)).toThrow(/no skill named "nope"/);
  });

  it("parses once: the same view until a folder changes; a new skill folder shows up by the folder's mtime", () => {
    const { catalog, publicDir } = catalogWith({ a: skillMd("a") });
    const first = catalog.view("alice");
    expect(catalog.view("alice")).toBe(first);
    mkdirSync(join(publicDir, "c"));
    writeFileSync(join(publicDir, "c", "SKILL.md"), skillMd("c"));
    const later = new Date(Date.now() + 5000);
    utimesSync(publicDir, later, later);
    const second = catalog.view("alice");
    expect(second).not.toBe(first);
    expect(second.skills.map((s) => s.name)).toEqual(["a", "c"]);
  });

  it("with maxAgeMs, skips looking at the folders for that long after a look, but never past a change made through it", () => {
    const { catalog, publicDir } = catalogWith({ a: skillMd("a"), b: skillMd("b") });
    const first = catalog.view("alice", 60_000);
    mkdirSync(join(publicDir, "c"));
    writeFileSync(join(publicDir, "c", "SKILL.md"), skillMd("c"));
    const later = new Date(Date.now() + 5000);
    utimesSync(publicDir, later, later);
    // Changed on disk by hand: not looked at within maxAgeMs; a caller without maxAgeMs looks at once.
    expect(catalog.view("alice", 60_000)).toBe(first);
    expect(catalog.view("alice").skills.map((s) => s.name)).toEqual(["a", "b", "c"]);
    expect(catalog.view("alice", 60_000).skills.map((s) => s.name)).toEqual(["a", "b", "c"]);
    // Changed through the catalog: seen by the very next view, whatever maxAgeMs.
    catalog.setEnabled("alice", "b", false);
    expect(catalog.view("alice", 60_000).enabled.map((s) => s.name)).toEqual(["a", "c"]);
  });

  it("with a short maxAgeMs, sees a change made on disk once that time has passed", async () => {
    const { catalog, publicDir } = catalogWith({ a: skillMd("a") });
    expect(catalog.view("alice", 30).skills.map((s) => s.name)).toEqual(["a"]);
    rmSync(join(publicDir, "a"), { recursive: true });
    const later = new Date(Date.now() + 5000);
    utimesSync(publicDir, later, later);
    await new Promise((done) => setTimeout(done, 50));
    expect(catalog.view("alice", 30).skills).toEqual([]);
  });

  it("tells its listeners about every change (the plugin drops cached agents there)", () => {
    const { catalog } = catalogWith({ a: skillMd("a") });
    const seen: Array<string | undefined> = [];
    catalog.onChange((user) => seen.push(user));
    catalog.setEnabled("alice", "a", false);
    catalog.reload();
    expect(seen).toEqual(["alice", undefined]);
  });

  it("refuses a user id that is not a safe folder name", () => {
    const { catalog } = catalogWith({});
    expect(() => catalog.view("../bob")).toThrow(/not usable as a folder name/);
  });
});

describe("the plugin", () => {
  runPluginConformance(skillsPlugin);
});
