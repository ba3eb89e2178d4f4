import { describe, expect, it } from "vitest";
import { FactIndex, indexTerms, MAX_TERM_DOCS, type MemoryFact, ScopeSnapshotCache } from "../src/index.js";

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

describe("indexTerms", () => {
  it("gives ASCII text and its accented, full-width or other-script forms the same terms", () => {
    expect(indexTerms("Hiking near Zurich, 2024: ok")).toEqual(["hike", "near", "zurich", "2024", "ok"]);
    expect(indexTerms("Hiking near Zürich, ２０２４: ｏｋ")).toEqual(["hike", "near", "zurich", "2024", "ok"]);
    expect(indexTerms("Любит походы и café")).toEqual(["любит", "походы", "и", "cafe"]);
    expect(indexTerms("")).toEqual([]);
  });
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
    const checked = { at: 0, writes: 0 };
    const [a, b] = await Promise.all([cache.get("alice", 1, checked, load), cache.get("alice", 1, checked, load)]);
    expect(a).toBe(b);
    expect(loads).toBe(1);
    expect(await cache.get("alice", 1, checked, load)).toBe(a);
    const rebuilt = await cache.get("alice", 2, checked, load);
    expect(rebuilt).not.toBe(a);
    expect(rebuilt.version).toBe(2);
    expect(rebuilt.index?.search("fact 2", { limit: 1 }).map((h) => h.content)).toEqual(["Fact 2"]);
    expect(loads).toBe(2);
  });

  it("does not keep a failed read", async () => {
    const cache = new ScopeSnapshotCache();
    const checked = { at: 0, writes: 0 };
    await expect(cache.get("alice", 1, checked, () => Promise.reject(new Error("database gone")))).rejects.toThrow("database gone");
    expect(cache.recent("alice", 0, 1000, 1)).toBeUndefined();
    expect((await cache.get("alice", 1, checked, async () => ({ facts: [fact("Back")], profile: undefined }))).index?.size).toBe(1);
  });

  it("serves a snapshot without a version read only within maxAgeMs of the last read and while this process wrote nothing", async () => {
    const cache = new ScopeSnapshotCache();
    const load = async () => ({ facts: [fact("Likes tea")], profile: undefined });
    expect(cache.recent("alice", 0, 1000, 0)).toBeUndefined();
    const snapshot = await cache.get("alice", 1, { at: 5000, writes: 3 }, load);
    expect(await cache.recent("alice", 3, 1000, 5999)).toBe(snapshot);
    expect(cache.recent("alice", 3, 1000, 6000)).toBeUndefined(); // the read is too old
    expect(cache.recent("alice", 4, 1000, 5001)).toBeUndefined(); // this process wrote since
    expect(cache.recent("bob", 3, 1000, 5001)).toBeUndefined();
    // A later read of the same version renews the check; an earlier one that finishes late does not.
    expect(await cache.get("alice", 1, { at: 7000, writes: 4 }, load)).toBe(snapshot);
    expect(await cache.recent("alice", 4, 1000, 7500)).toBe(snapshot);
    await cache.get("alice", 1, { at: 6500, writes: 3 }, load);
    expect(await cache.recent("alice", 4, 1000, 7500)).toBe(snapshot);
  });
});
