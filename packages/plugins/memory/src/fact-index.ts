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
  private readonly lengths: Uint32Array;
  private readonly averageLength: number;
  /** Each fact's terms by id, so the next build after a write re-stems only new or changed facts. */
  private readonly termsById = new Map<string, { content: string; terms: string[] }>();

  /** `previous`: the scope's index before the write, whose tokenisation is reused where content is unchanged. */
  constructor(
    readonly version: number,
    private readonly facts: readonly MemoryFact[],
    previous?: FactIndex,
  ) {
    this.lengths = new Uint32Array(facts.length);
    let total = 0;
    facts.forEach((fact, doc) => {
      const known = previous?.termsById.get(fact.id);
      const terms = known && known.content === fact.content ? known.terms : indexTerms(fact.content);
      this.termsById.set(fact.id, { content: fact.content, terms });
      this.lengths[doc] = terms.length;
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
    this.averageLength = facts.length === 0 ? 0 : total / facts.length;
  }

  get size(): number {
    return this.facts.length;
  }

  /** The facts most relevant to `text`, best first (ties: the more confident), at most `limit`. */
  search(text: string, options: { limit: number; category?: string | undefined }): SearchHit[] {
    if (options.limit <= 0) return [];
    const present = queryStems(text).flatMap((term) => {
      const list = this.postings.get(term);
      return list ? [{ term, list }] : [];
    });
    // Terms in too many facts are dropped unless nothing rarer matches; then only the rarest is kept.
    let used = present.filter((p) => p.list.docs.length <= MAX_TERM_DOCS);
    if (used.length === 0 && present.length > 0) used = [present.reduce((a, b) => (b.list.docs.length < a.list.docs.length ? b : a))];
    const n = this.facts.length;
    const scores = new Float64Array(n);
    const touched: number[] = [];
    for (const { list } of used) {
      const df = list.docs.length;
      const idf = Math.max(1e-6, Math.log((n - df + 0.5) / (df + 0.5)));
      for (let i = 0; i < df; i++) {
        const doc = list.docs[i] as number;
        const tf = list.tfs[i] as number;
        const norm = 1 - B + (B * (this.lengths[doc] ?? 0)) / (this.averageLength || 1);
        if (scores[doc] === 0) touched.push(doc);
        scores[doc] = (scores[doc] ?? 0) + (idf * tf * (K1 + 1)) / (tf + K1 * norm);
      }
    }
    // The best `limit` document numbers, kept in order as they come (limit is small, the matches may be many);
    // hit objects are built only for those.
    const better = (a: number, b: number) =>
      (scores[a] ?? 0) - (scores[b] ?? 0) || (this.facts[a]?.confidence ?? 0) - (this.facts[b]?.confidence ?? 0);
    const top: number[] = [];
    for (const doc of touched) {
      if (options.category && this.facts[doc]?.category !== options.category) continue;
      if (top.length === options.limit && better(doc, top[top.length - 1] as number) <= 0) continue;
      let at = top.length;
      while (at > 0 && better(doc, top[at - 1] as number) > 0) at--;
      top.splice(at, 0, doc);
      if (top.length > options.limit) top.pop();
    }
    return top.map((doc) => ({ ...(this.facts[doc] as MemoryFact), score: scores[doc] ?? 0 }));
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
