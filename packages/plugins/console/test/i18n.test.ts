import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageDir } from "./harness.js";

const messagesDir = join(packageDir, "web", "src", "messages");

/** A catalog module of the page (web/src/messages/<lang>.ts), by its exported name. */
async function catalog(lang: string): Promise<Record<string, string>> {
  const module = (await import(/* @vite-ignore */ join(messagesDir, `${lang}.ts`))) as Record<string, Record<string, string>>;
  const found = module[lang];
  if (!found) throw new Error(`web/src/messages/${lang}.ts exports no \`${lang}\``);
  return found;
}

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("the console's string catalogs", () => {
  it("has English and Simplified Chinese, and nothing else half-done", () => {
    expect(readdirSync(messagesDir).sort()).toEqual(["en.ts", "zh.ts"]);
  });

  it("gives Chinese exactly the English keys, each with the same {placeholders}, none empty", async () => {
    const en = await catalog("en");
    const zh = await catalog("zh");
    expect(Object.keys(en).length).toBeGreaterThan(150);
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort());
    for (const [key, text] of Object.entries(en)) {
      expect(text.trim(), key).not.toBe("");
      expect(zh[key]?.trim(), key).not.toBe("");
      expect(placeholders(zh[key] ?? ""), key).toEqual(placeholders(text));
    }
  });

  it("has Chinese words for the Chinese UI: only names, codes and symbols read the same in both", async () => {
    const en = await catalog("en");
    const zh = await catalog("zh");
    const same = Object.keys(en).filter((key) => en[key] === zh[key]);
    // The language names (each in its own language) and labels that are names (PDF, HTML) stay as they are.
    expect(same.sort()).toEqual(["artifacts.html", "artifacts.pdf", "lang.en", "lang.zh"]);
    const untranslated = Object.keys(zh).filter((key) => !/[\u4e00-\u9fff]/.test(zh[key] ?? "") && !same.includes(key));
    expect(untranslated).toEqual([]);
  });

  it("names every key the page uses, and the page uses no key the catalog lacks", async () => {
    const en = await catalog("en");
    const sources = readdirSync(join(packageDir, "web", "src"))
      .filter((f) => /\.tsx?$/.test(f))
      .map((f) => readFileSync(join(packageDir, "web", "src", f), "utf8"))
      .join("\n");
    // Literal keys: t("a.b"), title: "a.b", message: "a.b"; template keys (`threads.group.${kind}`) by their prefix.
    const literal = [...sources.matchAll(/\bt\(\s*"([\w.]+)"/g)].map((m) => m[1] ?? "");
    for (const key of literal) expect(en, key).toHaveProperty([key]);
    const prefixes = [...sources.matchAll(/\bt\(\s*`([\w.]+)\$\{/g)].map((m) => m[1] ?? "");
    const unused = Object.keys(en).filter(
      (key) => !sources.includes(`"${key}"`) && !prefixes.some((p) => key.startsWith(p)) && !key.startsWith("lang."),
    );
    expect(unused).toEqual([]);
  });
});
