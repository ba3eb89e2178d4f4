// Words that carry no topic: dropped from retrieval queries so "what is my favourite language" searches for
// "favourite language". The same list is used on SQLite and PostgreSQL, so both rank by the same terms.
export const STOP_WORDS = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being below between both but by " +
    "can could did do does doing down during each few for from further had has have having he her here hers herself him " +
    "himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other " +
    "our ours ourselves out over own please same she should so some such than that the their theirs them themselves then " +
    "there these they this those through to too under until up very was we were what when where which while who whom why " +
    "will with would you your yours yourself yourselves tell know think want like get got let lets also really im ive dont"
  ).split(" "),
);

/** At most this many terms per query: enough for a user message, bounded so a pasted essay stays one cheap lookup. */
export const MAX_QUERY_TERMS = 12;

/**
 * The search terms of a message: lower-cased words of letters and digits (any script), two characters or more,
 * without stop words, de-duplicated, longest first (rarer words carry more topic), at most MAX_QUERY_TERMS.
 */
export function queryTerms(text: string): string[] {
  const words =
    text
      .toLowerCase()
      .normalize("NFKC")
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  const seen = new Set<string>();
  for (const word of words) {
    if (word.length < 2 || word.length > 64 || STOP_WORDS.has(word)) continue;
    seen.add(word);
  }
  return [...seen].sort((a, b) => b.length - a.length).slice(0, MAX_QUERY_TERMS);
}

/** An FTS5 query: any of the terms, each quoted (so no term is read as FTS5 syntax). */
export function fts5Query(terms: readonly string[]): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");
}

/**
 * A term found in more facts than this ranks almost nothing (bm25's idf is near zero) but makes the lookup score
 * every fact that has it: "plans" in "what about sourdough for my plans?" would score thousands to find the
 * sourdough ones. Such terms are dropped from the query unless no rarer term matches anything.
 */
export const MAX_TERM_DOCS = 1_000;
