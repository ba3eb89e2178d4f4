import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentSignature, isStale, SignatureCache } from "../src/signature.js";
import { tempDir } from "./fixtures.js";

describe("content signatures", () => {
  it("detects an edit even when mtime and size are unchanged", () => {
    const dir = tempDir();
    const file = join(dir, "ext.json");
    writeFileSync(file, '{"a":1}');
    const fixed = new Date("2026-01-01T00:00:00Z");
    utimesSync(file, fixed, fixed);
    const before = contentSignature(file);
    expect(isStale(before, file)).toBe(false);
    writeFileSync(file, '{"a":2}');
    utimesSync(file, fixed, fixed);
    const after = contentSignature(file);
    expect(after?.mtimeMs).toBe(before?.mtimeMs);
    expect(after?.size).toBe(before?.size);
    expect(isStale(before, file)).toBe(true);
  });

  it("SignatureCache reloads only when the file changes, and on reset", () => {
    const dir = tempDir();
    const file = join(dir, "servers.json");
    writeFileSync(file, "1");
    const cache = new SignatureCache((path) => Number(readFileSync(path, "utf8")));
    expect(cache.get(file)).toBe(1);
    expect(cache.get(file)).toBe(1);
    expect(cache.loadCount).toBe(1);
    writeFileSync(file, "22");
    expect(cache.get(file)).toBe(22);
    expect(cache.loadCount).toBe(2);
    cache.reset();
    cache.get(file);
    expect(cache.loadCount).toBe(3);
  });

  it("treats a missing file as its own signature", () => {
    expect(contentSignature(join(tempDir(), "missing"))).toBeNull();
    expect(isStale(null, join(tempDir(), "missing"))).toBe(false);
  });
});
