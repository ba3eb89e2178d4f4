import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureConsoleBuilt, webDist } from "./harness.js";

const FIRST_SCREEN_BUDGET = 250 * 1024;

/** The files a browser must fetch before the first screen: entry script, its static imports, preloads, styles. */
function firstScreenFiles(): string[] {
  const html = readFileSync(join(webDist, "index.html"), "utf8");
  const refs = [...html.matchAll(/<(?:script|link)\b[^>]*?(?:src|href)="([^"]+)"/g)]
    .map((m) => m[1] ?? "")
    .filter((r) => r.startsWith("/assets/"));
  const files = new Set<string>();
  const visit = (asset: string) => {
    if (files.has(asset)) return;
    files.add(asset);
    if (!asset.endsWith(".js")) return;
    const code = readFileSync(join(webDist, asset), "utf8");
    // Static imports only (`import{a}from"./x.js"`, `import"./x.js"`); `import("./x.js")` loads later, on demand.
    for (const m of code.matchAll(/\bimport\s*(?:[\w${},\s*]+from\s*)?["'](\.\/[^"']+)["']/g)) visit(`assets/${(m[1] ?? "").slice(2)}`);
  };
  for (const ref of refs) visit(ref.slice(1));
  return [...files];
}

describe("the console's bundle", () => {
  beforeAll(ensureConsoleBuilt, 120_000);

  it(`keeps the first screen within ${FIRST_SCREEN_BUDGET / 1024} KB gzip (entry chunk, its static imports and styles)`, () => {
    const files = firstScreenFiles();
    expect(files.some((f) => f.endsWith(".js"))).toBe(true);
    const sizes = files.map((f) => ({ file: f, gzip: gzipSync(readFileSync(join(webDist, f))).length }));
    const total = sizes.reduce((sum, s) => sum + s.gzip, 0);
    expect(total, JSON.stringify(sizes)).toBeLessThanOrEqual(FIRST_SCREEN_BUDGET);
    expect(total).toBeGreaterThan(10 * 1024); // React is in there: the measurement saw the real bundle
  });

  it("loads KaTeX and the artifact viewers on demand: neither is on the first screen, both are built", () => {
    const first = firstScreenFiles().filter((f) => f.endsWith(".js"));
    const all = readdirSync(join(webDist, "assets")).filter((f) => f.endsWith(".js"));
    const katexIn = (file: string) =>
      readFileSync(join(webDist, file.startsWith("assets/") ? file : `assets/${file}`), "utf8").includes("KaTeX parse error");
    expect(first.filter(katexIn)).toEqual([]);
    expect(all.filter(katexIn)).toHaveLength(1);
    expect(first.some((f) => f.includes("artifact-viewers"))).toBe(false);
    expect(all.some((f) => f.startsWith("artifact-viewers"))).toBe(true);
  });

  it("loads the Chinese catalog on demand: it is built, and not on an English reader's first screen", () => {
    const first = firstScreenFiles().filter((f) => f.endsWith(".js"));
    const all = readdirSync(join(webDist, "assets")).filter((f) => f.endsWith(".js"));
    const zhIn = (file: string) =>
      readFileSync(join(webDist, file.startsWith("assets/") ? file : `assets/${file}`), "utf8").includes("跳到主要内容");
    expect(first.filter(zhIn)).toEqual([]);
    expect(all.filter(zhIn)).toHaveLength(1);
  });

  it("works offline: the page loads nothing from another origin (no CDN scripts, no web fonts)", () => {
    const html = readFileSync(join(webDist, "index.html"), "utf8");
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    for (const file of readdirSync(join(webDist, "assets"))) {
      const text = readFileSync(join(webDist, "assets", file), "utf8");
      if (file.endsWith(".css")) {
        expect(text, file).not.toMatch(/url\(\s*["']?(https?:)?\/\//);
        expect(text, file).not.toMatch(/@import|@font-face/);
      }
      if (file.endsWith(".js")) expect(text, file).not.toMatch(/import\s*\(?\s*["']https?:\/\//);
    }
  });
});
