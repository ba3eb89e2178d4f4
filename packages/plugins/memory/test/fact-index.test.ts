import { describe, expect, it } from "vitest";
import { FactIndex, MAX_TERM_DOCS, type MemoryFact, ScopeSnapshotCache } from "../src/index.js";

let seq = 0;
const fact = (content: string, extra: Partial<MemoryFact> = {}): MemoryFact => ({
  id: `fact_${seq++}`,
  content,
  category: "context",
  confidence: 0.8,
  source: "test",
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
  ...extra,
});

describe("FactIndex", () => {
  it("matches word forms and diacritics, ranks facts sharing more query words first, and ignores stop words", () => {
    const index = new FactIndex(1, [
      fact("Goes hiking in the Alps every summer"),
      fact("Prefers the café near Zürich station"),
      fact("Hikes with friends in the Alps"),
      fact("Has a dog"),
    ]);
    expect(index.search("any hikes planned?", { limit: 5 }).map((h) => h.content)).toEqual([
      "Hikes with friends in the Alps",
      "Goes hiking in the Alps every summer",
    ]);
    expect(index.search("alps hiking with friends", { limit: 1 }).map((h) => h.content)).toEqual(["Hikes with friends in the Alps"]);
    expect(index.search("cafe in zurich", { limit: 5 }).map((h) => h.content)).toEqual(["Prefers the café near Zürich station"]);
    expect(index.search("what is the", { limit: 5 })).toEqual([]);
  });

  it("filters by category and breaks score ties by confidence", () => {
    const index = new FactIndex(1, [
      fact("Likes tea", { confidence: 0.7 }),
      fact("Likes tea", { confidence: 0.9, category: "preference" }),
    ]);
    expect(index.search("tea", { limit: 5 }).map((h) => h.confidence)).toEqual([0.9, 0.7]);
    expect(index.search("tea", { limit: 5, category: "preference" }).map((h) => h.confidence)).toEqual([0.9]);
    expect(index.search("tea", { limit: 0 })).toEqual([]);
  });

  it("drops a term found in more than MAX_TERM_DOCS facts when a rarer one matches, and keeps it when nothing else does", () => {
    const facts = Array.from({ length: MAX_TERM_DOCS + 10 }, (_, i) => fact(`Plans trip number ${i}`));
    facts.push(fact("Plans to bake sourdough"));
    const index = new FactIndex(1, facts);
    expect(index.search("sourdough plans", { limit: 3 }).map((h) => h.content)).toEqual(["Plans to bake sourdough"]);
    expect(index.search("plans", { limit: 3 })).toHaveLength(3);
  });
});

describe("ScopeSnapshotCache", () => {
  it("reuses a snapshot while the version holds, rebuilds when it moves, and shares one read between concurrent lookups", async () => {
    const cache = new ScopeSnapshotCache();
    let loads = 0;
    const load = async () => {
      loads++;
      return { facts: [fact(`Fact ${loads}`)], profile: undefined };
    };
    const [a, b] = await Promise.all([cache.get("alice", 1, load), cache.get("alice", 1, load)]);
    expect(a).toBe(b);
    expect(loads).toBe(1);
    expect(await cache.get("alice", 1, load)).toBe(a);
    const rebuilt = await cache.get("alice", 2, load);
    expect(rebuilt).not.toBe(a);
    expect(rebuilt.version).toBe(2);
    expect(rebuilt.index?.search("fact 2", { limit: 1 }).map((h) => h.content)).toEqual(["Fact 2"]);
    expect(loads).toBe(2);
  });

  it("does not keep a failed read", async () => {
    const cache = new ScopeSnapshotCache();
    await expect(cache.get("alice", 1, () => Promise.reject(new Error("database gone")))).rejects.toThrow("database gone");
    expect((await cache.get("alice", 1, async () => ({ facts: [fact("Back")], profile: undefined }))).index?.size).toBe(1);
  });
});
