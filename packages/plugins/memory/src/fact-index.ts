import { stemmer } from "stemmer";
import { MAX_QUERY_TERMS, MAX_TERM_DOCS, STOP_WORDS } from "./search-terms.js";
import type { MemoryFact, MemoryProfilesTable, SearchHit } from "./store.js";

/** BM25's parameters, as SQLite's FTS5 uses them. */
const K1 = 1.2;
const B = 0.75;

/** Stems of recently seen words: a user's vocabulary repeats, and Porter stemming costs more than a lookup. */
const stems = new Map<string, string>();
const MAX_CACHED_STEMS = 20_000;

function stem(word: string): string {
  if (word.length <= 2) return word;
  let stemmed = stems.get(word);
  if (stemmed === undefined) {
    stemmed = stemmer(word);
    if (stems.size >= MAX_CACHED_STEMS) stems.clear();
    stems.set(word, stemmed);
  }
  return stemmed;
}

/**
 * The lower-cased words of a text, compatibility-normalised and without diacritics: runs of letters and digits
 * of any script. ASCII text (most messages) needs neither normalisation nor the Unicode classes, and skips them.
 */
function words(text: string): string[] {
  const lower = text.toLowerCase();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the test is "is every character ASCII"
  if (/^[\x00-\x7f]*$/.test(lower)) return lower.match(/[a-z0-9]+/g) ?? [];
  return (
    lower
      .normalize("NFKD")
      .replace(/\p{M}+/gu, "")
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/**
 * The words of a text as the index sees them: lower case, compatibility-normalised, without diacritics, letters
 * and digits of any script, Porter-stemmed. Both a fact's content and a query go through it.
 */
export function indexTerms(text: string): string[] {
  return words(text).map(stem);
}

/** The query terms of a message: indexTerms without stop words and one-letter words, de-duplicated, bounded. */
function queryStems(text: string): string[] {
  const seen = new Set<string>();
  for (const word of words(text)) {
    if (word.length < 2 || word.length > 64 || STOP_WORDS.has(word)) continue;
    seen.add(stem(word));
    if (seen.size >= MAX_QUERY_TERMS) break;
  }
  return [...seen];
}

/** A term's facts, in fact order, each with its BM25 weight (before idf) and confidence next to it. */
interface Posting {
  readonly docs: Int32Array;
  /** `tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / averageLength))`, per fact. */
  readonly weights: Float64Array;
  /** The fact's confidence, the tie-breaker. */
  readonly confidences: Float64Array;
}

/**
 * One scope's facts in memory, with an inverted index ranked by BM25. Built from the facts as stored, tagged with
 * the scope's version (bumped by the database on every write to the scope's facts); a lookup whose version no
 * longer matches rebuilds it. A search costs microseconds instead of a full-text query per turn: everything it
 * needs is laid out in each term's posting and read in order, one pass per term, with no per-fact table to jump
 * around in (on a busy turn the caches are cold, and those jumps would cost more than the arithmetic).
 */
export class FactIndex {
  private readonly postings = new Map<string, Posting>();
  /** Each fact's terms by id, so the next build after a write re-stems only new or changed facts. */
  private readonly termsById = new Map<string, { content: string; terms: string[] }>();

  /** `previous`: the scope's index before the write, whose tokenisation is reused where content is unchanged. */
  constructor(
    readonly version: number,
    private readonly facts: readonly MemoryFact[],
    previous?: FactIndex,
  ) {
    const lengths = new Uint32Array(facts.length);
    const counts = new Map<string, { docs: number[]; tfs: number[] }>();
    let total = 0;
    facts.forEach((fact, doc) => {
      const known = previous?.termsById.get(fact.id);
      const terms = known && known.content === fact.content ? known.terms : indexTerms(fact.content);
      this.termsById.set(fact.id, { content: fact.content, terms });
      lengths[doc] = terms.length;
      total += terms.length;
      for (const term of terms) {
        const list = counts.get(term);
        if (!list) counts.set(term, { docs: [doc], tfs: [1] });
        else if (list.docs[list.docs.length - 1] === doc) (list.tfs[list.tfs.length - 1] as number)++;
        else {
          list.docs.push(doc);
          list.tfs.push(1);
        }
      }
    });
    const averageLength = facts.length === 0 ? 0 : total / facts.length;
    for (const [term, { docs, tfs }] of counts) {
      const weights = new Float64Array(docs.length);
      const confidences = new Float64Array(docs.length);
      docs.forEach((doc, i) => {
        const tf = tfs[i] as number;
        weights[i] = (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * (lengths[doc] ?? 0)) / (averageLength || 1)));
        confidences[i] = facts[doc]?.confidence ?? 0;
      });
      this.postings.set(term, { docs: Int32Array.from(docs), weights, confidences });
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
    const top: Ranked = { docs: [], scores: [], confidences: [] };
    if (options.limit <= 0) return top;
    const present = queryStems(text).flatMap((term) => {
      const posting = this.postings.get(term);
      return posting ? [posting] : [];
    });
    // Terms in too many facts are dropped unless nothing rarer matches; then only the rarest is kept.
    let used = present.filter((p) => p.docs.length <= MAX_TERM_DOCS);
    if (used.length === 0 && present.length > 0) used = [present.reduce((a, b) => (b.docs.length < a.docs.length ? b : a))];
    const n = this.facts.length;
    const idfs = used.map((p) => Math.max(1e-6, Math.log((n - p.docs.length + 0.5) / (p.docs.length + 0.5))));
    const category = options.category;
    const offer = (doc: number, score: number, confidence: number): void => {
      if (category && this.facts[doc]?.category !== category) return;
      keepBest(top, options.limit, doc, score, confidence);
    };
    if (used.length === 1) {
      const { docs, weights, confidences } = used[0] as Posting;
      const idf = idfs[0] as number;
      for (let i = 0; i < docs.length; i++) offer(docs[i] as number, idf * (weights[i] as number), confidences[i] as number);
      return top;
    }
    // Several terms: merge their postings (each in fact order), summing a fact's weights as its entries meet.
    const at = new Int32Array(used.length);
    for (;;) {
      let doc = Number.POSITIVE_INFINITY;
      for (let t = 0; t < used.length; t++) {
        const next = (used[t] as Posting).docs[at[t] as number];
        if (next !== undefined && next < doc) doc = next;
      }
      if (doc === Number.POSITIVE_INFINITY) return top;
      let score = 0;
      let confidence = 0;
      for (let t = 0; t < used.length; t++) {
        const posting = used[t] as Posting;
        const i = at[t] as number;
        if (posting.docs[i] !== doc) continue;
        score += (idfs[t] as number) * (posting.weights[i] as number);
        confidence = posting.confidences[i] as number;
        at[t] = i + 1;
      }
      offer(doc, score, confidence);
    }
  }
}

/** The best facts so far, best first: parallel arrays of fact number, score and confidence. */
interface Ranked {
  docs: number[];
  scores: number[];
  confidences: number[];
}

/** Puts a fact into `top` if it ranks among the best `limit` (higher score, then higher confidence; ties: first come). */
function keepBest(top: Ranked, limit: number, doc: number, score: number, confidence: number): void {
  const ranksAbove = (i: number): boolean => {
    const s = top.scores[i] as number;
    return score > s || (score === s && confidence > (top.confidences[i] as number));
  };
  let at = top.docs.length;
  if (at === limit && !ranksAbove(at - 1)) return;
  while (at > 0 && ranksAbove(at - 1)) at--;
  top.docs.splice(at, 0, doc);
  top.scores.splice(at, 0, score);
  top.confidences.splice(at, 0, confidence);
  if (top.docs.length > limit) {
    top.docs.pop();
    top.scores.pop();
    top.confidences.pop();
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

/** When a scope's version was last read: the clock then, and this process's memory write count before the read. */
export interface VersionCheck {
  at: number;
  writes: number;
}

interface CachedSnapshot {
  version: number;
  snapshot: Promise<ScopeSnapshot>;
  /** The snapshot once loaded, for a caller that must not wait. */
  loaded?: ScopeSnapshot;
  /** Facts held (counted against INDEX_CACHE_FACTS). */
  size: number;
  checked: VersionCheck;
}

/**
 * The snapshots of recently used scopes, each tagged with the version it was read at. A lookup passes the scope's
 * current version (read first, then the rows, so a write in between only causes one more rebuild); concurrent
 * lookups of one scope share one read. `recent` lets a lookup skip the version read for a while after the last
 * one, as long as this process has written nothing since.
 */
export class ScopeSnapshotCache {
  private readonly entries = new Map<string, CachedSnapshot>();
  private held = 0;

  /**
   * The scope's snapshot as of its last version read, if that read began less than `maxAgeMs` before `now` and
   * `writes` (this process's write count) has not moved since; otherwise undefined, and the caller reads the version.
   */
  recent(key: string, writes: number, maxAgeMs: number, now: number): ScopeSnapshot | Promise<ScopeSnapshot> | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.checked.writes !== writes || now - entry.checked.at >= maxAgeMs) return undefined;
    return entry.loaded ?? entry.snapshot; // the snapshot itself once loaded: no promise for a turn to wait on
  }

  async get(
    key: string,
    version: number,
    checked: VersionCheck,
    load: () => Promise<{ facts: MemoryFact[]; profile: MemoryProfilesTable | undefined }>,
  ): Promise<ScopeSnapshot> {
    const entry = this.entries.get(key);
    if (entry && entry.version === version) {
      if (checked.at >= entry.checked.at) entry.checked = checked;
      this.entries.delete(key); // most recently used last
      this.entries.set(key, entry);
      return entry.snapshot;
    }
    const previous = entry?.snapshot;
    if (entry) this.drop(key);
    const fresh: CachedSnapshot = {
      version,
      size: 0,
      checked,
      snapshot: Promise.resolve<ScopeSnapshot>({ version, index: null, profile: undefined }),
    };
    fresh.snapshot = Promise.all([load(), previous?.catch(() => undefined)]).then(
      ([{ facts, profile }, before]) => {
        const indexed = facts.length <= INDEX_MAX_FACTS;
        if (indexed && this.entries.get(key) === fresh) {
          fresh.size = facts.length;
          this.held += facts.length;
          this.evict(key);
        }
        fresh.loaded = { version, profile, index: indexed ? new FactIndex(version, facts, before?.index ?? undefined) : null };
        return fresh.loaded;
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
