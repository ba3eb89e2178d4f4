// The code blocks of README.md, docs/**/*.md and the package READMEs compile and check (scripts/docs-snippets.mjs:
// one tsc run for the TypeScript, the built `antler config check` for config YAML), and the check catches a broken one.
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { extractBlocks } from "../docs-snippets.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const script = join(root, "scripts", "docs-snippets.mjs");
const fixtureDir = join(root, "node_modules", ".cache", "docs-snippets-fixture");

function runCheck(args: string[]) {
  const res = spawnSync(process.execPath, [script, ...args], { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return { status: res.status, out: res.stdout, problems: res.stderr.trim() ? res.stderr.trim().split("\n") : [] };
}

afterAll(() => rmSync(fixtureDir, { recursive: true, force: true }));

describe("documentation snippets", () => {
  it("type-check (```ts) and pass antler config check (config ```yaml) in README.md, docs/ and every package README", () => {
    const { status, out, problems } = runCheck([]);
    expect(problems).toEqual([]);
    expect(status).toBe(0);
    expect(out).toMatch(/^\d+ TypeScript and \d+ YAML snippets/);
  }, 300_000);

  it("report a broken snippet at its Markdown file:line, skip a marked fragment and require a reason on the marker", () => {
    mkdirSync(fixtureDir, { recursive: true });
    const fixture = join(fixtureDir, "fixture.md");
    writeFileSync(
      fixture,
      [
        "# Fixture", // 1
        "```ts", // 2
        'import { AntlerClient } from "@antler/kernel";', // 3: the wrong package
        "```", // 4
        "```ts", // 5
        'import { AntlerClient } from "@antler/plugin-runtime";', // 6
        'const client = await AntlerClient.create({ configPath: "config.yaml" });', // 7
        'const n: number = await client.chat("hi");', // 8: chat answers a string
        "```", // 9
        "<!-- snippet: fragment: uses `client` from above -->", // 10
        "```ts", // 11
        "await client.close();", // 12
        "```", // 13
        "```yaml", // 14
        "models: []", // 15
        "sandbx: {}", // 16: misspelt key
        "```", // 17
        "```yaml", // 18
        "key: [unclosed", // 19
        "```", // 20
        "<!-- snippet: fragment -->", // 21
        "```ts", // 22
        "export const answer = 42;", // 23
        "```", // 24
      ].join("\n"),
    );
    const { status, problems } = runCheck(["--file", fixture, "--cache", join(fixtureDir, "sandbox")]);
    const at = "node_modules/.cache/docs-snippets-fixture/fixture.md";
    expect(status).toBe(1);
    expect(problems).toEqual([
      expect.stringMatching(new RegExp(`^${at}:21: a \`snippet: fragment\` marker needs a reason`)),
      expect.stringMatching(new RegExp(`^${at}:19: YAML does not parse`)),
      expect.stringMatching(new RegExp(`^${at}:15: antler config check: .*invalid`)),
      expect.stringMatching(new RegExp(`^\\s*${at}:16:1 sandbx: unknown key "sandbx".*did you mean "sandbox"`)),
      expect.stringMatching(new RegExp(`^${at}:3: TS2305: Module '"@antler/kernel"' has no exported member 'AntlerClient'`)),
      expect.stringMatching(new RegExp(`^${at}:8: TS2322: Type 'string' is not assignable to type 'number'`)),
    ]);
  }, 300_000);

  it("extracts fenced blocks with their first code line, indented fences and fragment markers", () => {
    const { blocks, problems } = extractBlocks(
      ["Text", "<!-- snippet: fragment: a method body -->", "", "```ts", "a();", "```", "- item", "  ```yaml", "  k: v", "  ```"].join(
        "\n",
      ),
    );
    expect(problems).toEqual([]);
    expect(blocks).toEqual([
      { lang: "ts", info: "", line: 5, code: "a();", fragment: "a method body", continues: false },
      { lang: "yaml", info: "", line: 9, code: "k: v", fragment: undefined, continues: false },
    ]);
  });
});
