import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SkillCatalog } from "../src/catalog.js";

const publicDir = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "..",
  "..",
  "examples",
  "research-assistant",
  "skills",
  "public",
);

describe("the research assistant's public skills", () => {
  it("all three parse, match their folders and are listed with no issues", () => {
    const catalog = new SkillCatalog({ publicDir, baseDir: join(publicDir, "no-data") });
    const view = catalog.view("default");
    expect(view.issues).toEqual([]);
    expect(view.skills.map((s) => s.name)).toEqual(["citation-format", "report-writing", "source-evaluation"]);
    // report-writing restricts tools; the others are guidance only.
    expect(view.get("report-writing")?.allowedTools).toEqual(expect.arrayContaining(["write_report", "search_notes", "web_fetch"]));
    // The demo computes its table with bash in the sandbox and cross-checks it with an MCP tool named explicitly;
    // delegation (task) and the browser stay out while the skill is active.
    expect(view.get("report-writing")?.allowedTools).toEqual(expect.arrayContaining(["bash", "everything_get-sum"]));
    expect(view.get("report-writing")?.allowedTools).not.toContain("task");
    expect(view.get("source-evaluation")?.allowedTools).toBeUndefined();
    for (const skill of view.skills) expect(catalog.readBody(skill).length).toBeGreaterThan(1000);
  });
});
