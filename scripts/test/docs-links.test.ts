// Every relative link and #anchor in README.md, docs/**/*.md and packages/**/README.md resolves: the file or folder
// exists, and an anchor into a Markdown file names one of its headings as GitHub slugs them (or an explicit id).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

function markdownFiles(): string[] {
  const files = [join(root, "README.md")];
  const walk = (dir: string, keep: (name: string) => boolean) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name === "dist" || entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path, keep);
      else if (keep(entry.name)) files.push(path);
    }
  };
  walk(join(root, "docs"), (name) => name.endsWith(".md"));
  walk(join(root, "packages"), (name) => name === "README.md");
  return files;
}

/** The lines outside fenced code blocks, with inline code spans blanked. */
function proseLines(text: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of text.split("\n")) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      lines.push("");
      continue;
    }
    if (marker) {
      fence = marker;
      lines.push("");
      continue;
    }
    lines.push(line.replace(/(`+)[\s\S]*?\1/g, (span) => " ".repeat(span.length)));
  }
  return lines;
}

/** GitHub's heading id: lower case, punctuation dropped (letters, digits, `-`, `_` and spaces kept), spaces to `-`. */
function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}\- _]/gu, "").replace(/ /g, "-");
}

/** The anchors a Markdown text defines: heading slugs (repeats get -1, -2, …) and explicit id/name attributes. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of text.split("\n")) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      continue;
    }
    if (marker) {
      fence = marker;
      continue;
    }
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const slug = githubSlug(heading);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const m of line.matchAll(/<[a-z]+\s[^>]*\b(?:id|name)="([^"]+)"/gi)) anchors.add(m[1] as string);
  }
  return anchors;
}

/** The link targets of a Markdown text: inline links and images, reference definitions, and HTML src/href. */
function linksOf(text: string): Array<{ line: number; target: string }> {
  const links: Array<{ line: number; target: string }> = [];
  proseLines(text).forEach((line, index) => {
    const add = (target: string) => links.push({ line: index + 1, target });
    for (const m of line.matchAll(/\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+"[^"]*")?\s*\)/g)) {
      add((m[1] as string).replace(/^<|>$/g, ""));
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*(\S+)/.exec(line);
    if (definition) add((definition[1] as string).replace(/^<|>$/g, ""));
    for (const m of line.matchAll(/\b(?:src|href)="([^"]+)"/g)) add(m[1] as string);
  });
  return links;
}

/** What is wrong with one Markdown file's relative links and anchors, one line each ([] when all resolve). */
function brokenLinks(file: string, text: string, read: (path: string) => string | undefined): string[] {
  const problems: string[] = [];
  const where = (line: number) => `${relative(root, file)}:${line}`;
  for (const { line, target } of linksOf(text)) {
    if (target === "" || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue;
    const hash = target.indexOf("#");
    const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash)).replace(/\?.*$/, "");
    const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const path = pathPart === "" ? file : pathPart.startsWith("/") ? join(root, pathPart) : resolve(dirname(file), pathPart);
    const content = path === file ? text : read(path);
    if (path !== file && !existsSync(path)) {
      problems.push(`${where(line)}: ${target}: no such file`);
      continue;
    }
    if (anchor === undefined || anchor === "") continue;
    if (!path.endsWith(".md") || content === undefined) continue;
    if (/^L\d+/.test(anchor)) continue;
    if (!anchorsOf(content).has(anchor.toLowerCase())) problems.push(`${where(line)}: ${target}: no heading with that anchor`);
  }
  return problems;
}

const readIfFile = (path: string): string | undefined =>
  existsSync(path) && statSync(path).isFile() ? readFileSync(path, "utf8") : undefined;

describe("documentation links", () => {
  it("resolve in README.md, docs/**/*.md and every package README (files exist, anchors name headings)", () => {
    const files = markdownFiles();
    expect(files.length).toBeGreaterThan(20);
    const problems = files.flatMap((file) => brokenLinks(file, readFileSync(file, "utf8"), readIfFile));
    expect(problems).toEqual([]);
  });

  it("slugs headings as GitHub does: punctuation and code marks dropped, repeats numbered", () => {
    const anchors = anchorsOf(
      "# How runs are executed and resumed\n## LangGraph: `useStream` and the SDK `Client`\n## Models\n## Models\n",
    );
    expect([...anchors]).toEqual(["how-runs-are-executed-and-resumed", "langgraph-usestream-and-the-sdk-client", "models", "models-1"]);
  });

  it("reports a missing file, a missing anchor in another file and in the same file, and ignores code", () => {
    const file = join(root, "docs", "fixture.md");
    const text = [
      "# Fixture",
      "[ok](#fixture) [ok too](../README.md#quick-start) [site](https://example.com/x.md)",
      "[gone](./no-such-page.md) [bad anchor](../README.md#no-such-section) [self](#nowhere)",
      "`[in code](missing.md)`",
      "```md",
      "[in a fence](missing.md)",
      "```",
    ].join("\n");
    const problems = brokenLinks(file, text, readIfFile);
    expect(problems).toEqual([
      "docs/fixture.md:3: ./no-such-page.md: no such file",
      "docs/fixture.md:3: ../README.md#no-such-section: no heading with that anchor",
      "docs/fixture.md:3: #nowhere: no heading with that anchor",
    ]);
  });
});
