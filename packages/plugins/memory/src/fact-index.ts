import { stemmer } from "stemmer";
import { MAX_QUERY_TERMS, MAX_TERM_DOCS, STOP_WORDS } from "./search-terms.js";
import type { MemoryFact, MemoryProfilesTable, SearchHit } from "./store.js";

/** BM25's parameters, as SQLite's FTS5 uses them. */
const K1 = 1.2;
const B = 0.75;

/**
 * The words of a text as the index sees them: lower case, compatibility-normalised, without diacritics, letters
 * and digits of any script, Porter-stemmed. Both a fact's content and a query go through it.
 */
export function indexTerms(text: string): string[] {
  const words =
    text
      .toLowerCase()
      .normalize("NFKD")
      .replace(/\p{M}+/gu, "")
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.map((w) => (w.length > 2 ? stemmer(w) : w));
}

/** The query terms of a message: indexTerms without stop words and one-letter words, de-duplicated, bounded. */
function queryStems(text: string): string[] {
  const seen = new Set<string>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (word.length < 2 || word.length > 64 || STOP_WORDS.has(word)) continue;
    for (const stem of indexTerms(word)) seen.add(stem);
    if (seen.size >= MAX_QUERY_TERMS) break;
  }
  return [...seen];
}

/**
 * One scope's facts in memory, with an inverted index ranked by BM25. Built from the facts as stored, tagged with
 * the scope's version (bumped by the database on every write to the scope's facts); a lookup whose version no
 * longer matches rebuilds it. A search costs microseconds instead of a full-text query per turn.
 */
export class FactIndex {
  /** term → the facts that have it (parallel arrays: fact number, occurrences). */
  private readonly postings = new Map<string, { docs: number[]; tfs: number[] }>();
  /** Each fact's BM25 length term, `K1 * (1 - B + B * length / averageLength)`, computed once. */
  private readonly lengthTerms: Float64Array;
  /** Each fact's confidence, the tie-breaker, next to each other rather than one per fact object. */
  private readonly confidences: Float64Array;
  /** Scores by fact number, zero between searches: reused, since a search runs to the end without yielding. */
  private scratch: Float64Array | undefined;
  /** Each fact's terms by id, so the next build after a write re-stems only new or changed facts. */
  private readonly termsById = new Map<string, { content: string; terms: string[] }>();

  /** `previous`: the scope's index before the write, whose tokenisation is reused where content is unchanged. */
  constructor(
    readonly version: number,
    private readonly facts: readonly MemoryFact[],
    previous?: FactIndex,
  ) {
    const lengths = new Uint32Array(facts.length);
    let total = 0;
    facts.forEach((fact, doc) => {
      const known = previous?.termsById.get(fact.id);
      const terms = known && known.content === fact.content ? known.terms : indexTerms(fact.content);
      this.termsById.set(fact.id, { content: fact.content, terms });
      lengths[doc] = terms.length;
      total += terms.length;
      for (const term of terms) {
        const list = this.postings.get(term);
        if (!list) this.postings.set(term, { docs: [doc], tfs: [1] });
        else if (list.docs[list.docs.length - 1] === doc) (list.tfs[list.tfs.length - 1] as number)++;
        else {
          list.docs.push(doc);
          list.tfs.push(1);
        }
      }
    });
    const averageLength = facts.length === 0 ? 0 : total / facts.length;
    this.lengthTerms = new Float64Array(facts.length);
    this.confidences = new Float64Array(facts.length);
    for (let doc = 0; doc < facts.length; doc++) {
      this.confidences[doc] = facts[doc]?.confidence ?? 0;
      this.lengthTerms[doc] = K1 * (1 - B + (B * (lengths[doc] ?? 0)) / (averageLength || 1));
    }
  }

  get size(): number {
    return this.facts.length;
  }

  /** The facts most relevant to `text`, best first (ties: the more confident), at most `limit`. */
  search(text: string, options: { limit: number; category?: string | undefined }): SearchHit[] {
    const { docs, scores } = this.rank(text, options);
    return docs.map((doc, i) => ({ ...(this.facts[doc] as MemoryFact), score: scores[i] ?? 0 }));
  }

  /** What `search` finds, as `line(fact)` of each (the injected block's lines): no hit objects on a turn's lookup. */
  factLines(text: string, limit: number, line: (fact: MemoryFact) => string): string[] {
    return this.rank(text, { limit }).docs.map((doc) => line(this.facts[doc] as MemoryFact));
  }

  /** The best `limit` fact numbers for `text` and their scores, best first. */
  private rank(text: string, options: { limit: number; category?: string | undefined }): { docs: number[]; scores: number[] } {
    if (options.limit <= 0) return { docs: [], scores: [] };
    const present = queryStems(text).flatMap((term) => {
      const list = this.postings.get(term);
      return list ? [{ term, list }] : [];
    });
    // Terms in too many facts are dropped unless nothing rarer matches; then only the rarest is kept.
    let used = present.filter((p) => p.list.docs.length <= MAX_TERM_DOCS);
    if (used.length === 0 && present.length > 0) used = [present.reduce((a, b) => (b.list.docs.length < a.list.docs.length ? b : a))];
    const n = this.facts.length;
    this.scratch ??= new Float64Array(n);
    const scores = this.scratch;
    const touched: number[] = [];
    for (const { list } of used) {
      const df = list.docs.length;
      const idf = Math.max(1e-6, Math.log((n - df + 0.5) / (df + 0.5)));
      for (let i = 0; i < df; i++) {
        const doc = list.docs[i] as number;
        const tf = list.tfs[i] as number;
        if (scores[doc] === 0) touched.push(doc);
        scores[doc] = (scores[doc] ?? 0) + (idf * tf * (K1 + 1)) / (tf + (this.lengthTerms[doc] ?? 0));
      }
    }
    // The best `limit` fact numbers, kept in order as they come (limit is small, the matches may be many).
    const top: number[] = [];
    for (const doc of touched) {
      if (options.category && this.facts[doc]?.category !== options.category) continue;
      if (top.length === options.limit && this.compare(scores, doc, top[top.length - 1] as number) <= 0) continue;
      let at = top.length;
      while (at > 0 && this.compare(scores, doc, top[at - 1] as number) > 0) at--;
      top.splice(at, 0, doc);
      if (top.length > options.limit) top.pop();
    }
    const topScores = top.map((doc) => scores[doc] ?? 0);
    for (const doc of touched) scores[doc] = 0;
    return { docs: top, scores: topScores };
  }

  /** Positive when fact `a` ranks above fact `b`: the higher score, then the more confident. */
  private compare(scores: Float64Array, a: number, b: number): number {
    return (scores[a] ?? 0) - (scores[b] ?? 0) || (this.confidences[a] ?? 0) - (this.confidences[b] ?? 0);
  }
}

/** Scopes with more facts than this are searched by the database's full-text index instead of in memory. */
export const INDEX_MAX_FACTS = 20_000;
/** Facts held in memory over all cached scopes; the least recently used scopes go first. */
export const INDEX_CACHE_FACTS = 200_000;

/** What a scope's lookups need, as of one version: the facts' index (null above INDEX_MAX_FACTS) and the profile. */
export interface ScopeSnapshot {
  readonly version: number;
  readonly index: FactIndex | null;
  readonly profile: MemoryProfilesTable | undefined;
}

/**
 * The snapshots of recently used scopes, each tagged with the version it was read at. A lookup passes the scope's
 * current version (read first, then the rows, so a write in between only causes one more rebuild); concurrent
 * lookups of one scope share one read.
 */
export class ScopeSnapshotCache {
  private readonly entries = new Map<string, { version: number; snapshot: Promise<ScopeSnapshot>; size: number }>();
  private held = 0;

  async get(
    key: string,
    version: number,
    load: () => Promise<{ facts: MemoryFact[]; profile: MemoryProfilesTable | undefined }>,
  ): Promise<ScopeSnapshot> {
    const entry = this.entries.get(key);
    if (entry && entry.version === version) {
      this.entries.delete(key); // most recently used last
      this.entries.set(key, entry);
      return entry.snapshot;
    }
    const previous = entry?.snapshot;
    if (entry) this.drop(key);
    const fresh = { version, size: 0, snapshot: Promise.resolve<ScopeSnapshot>({ version, index: null, profile: undefined }) };
    fresh.snapshot = Promise.all([load(), previous?.catch(() => undefined)]).then(
      ([{ facts, profile }, before]) => {
        const indexed = facts.length <= INDEX_MAX_FACTS;
        if (indexed && this.entries.get(key) === fresh) {
          fresh.size = facts.length;
          this.held += facts.length;
          this.evict(key);
        }
        return { version, profile, index: indexed ? new FactIndex(version, facts, before?.index ?? undefined) : null };
      },
      (err: unknown) => {
        if (this.entries.get(key) === fresh) this.entries.delete(key);
        throw err;
      },
    );
    this.entries.set(key, fresh);
    return fresh.snapshot;
  }

  /** Forgets every snapshot (the service is closing). */
  clear(): void {
    this.entries.clear();
    this.held = 0;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.held -= entry.size;
    this.entries.delete(key);
  }

  private evict(keep: string): void {
    for (const key of this.entries.keys()) {
      if (this.held <= INDEX_CACHE_FACTS) return;
      if (key !== keep) this.drop(key);
    }
  }
}
