import { createHash } from "node:crypto";
import type { AntlerTool } from "@antler/kernel";
import { convertToOpenAIFunction } from "@langchain/core/utils/function_calling";

/** A tool as a provider receives it: name, description and the JSON Schema of its arguments. */
export interface FunctionSchema {
  name: string;
  description: string;
  parameters: unknown;
}

/** What one `tool_search` query found: the tools to load, a note for the model, or why the query is unusable. */
export interface SearchOutcome {
  readonly tools: readonly AntlerTool[];
  /** Said to the model next to the schemas (names that were not found, a fallback that was used). */
  readonly note?: string | undefined;
  /** The query cannot be run (an invalid regular expression, an empty query); nothing is loaded. */
  readonly error?: string | undefined;
}

// Words that say nothing about which tool is meant; ranking on them would favour long descriptions.
const STOP_WORDS = new Set(
  "a an and are as at be but by can do for from get has have how i in is it its me my of on or please so that the this to use using via was we what when which who will with you your".split(
    " ",
  ),
);

/** The words of a text for ranking: lower case, split on anything but letters and digits, stop words dropped, a plural `s` cut. */
export function rankWords(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (raw.length < 2 || STOP_WORDS.has(raw)) continue;
    out.push(raw.length > 3 && raw.endsWith("s") && !raw.endsWith("ss") ? raw.slice(0, -1) : raw);
  }
  return out;
}

interface Indexed {
  readonly tool: AntlerTool;
  readonly lowerName: string;
  readonly nameWords: ReadonlySet<string>;
  readonly descriptionWords: ReadonlySet<string>;
}

/**
 * The deferred tools of one agent build: searchable, hashed, immutable. The hash covers every tool's name and
 * provider-facing schema, so a tool added, removed or changed gives another hash and old promotions lapse.
 */
export class DeferredToolCatalog {
  readonly tools: readonly AntlerTool[];
  readonly names: ReadonlySet<string>;
  /** Deferred names in alphabetical order, as the prompt lists them. */
  readonly sortedNames: readonly string[];
  private readonly indexed: readonly Indexed[];
  private readonly schemas = new Map<string, FunctionSchema>();
  private hashValue: string | undefined;

  constructor(tools: readonly AntlerTool[]) {
    const byName = new Map<string, AntlerTool>();
    for (const tool of tools) if (!byName.has(tool.name)) byName.set(tool.name, tool);
    this.tools = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.names = new Set(byName.keys());
    this.sortedNames = this.tools.map((t) => t.name);
    this.indexed = this.tools.map((tool) => ({
      tool,
      lowerName: tool.name.toLowerCase(),
      nameWords: new Set(rankWords(tool.name)),
      descriptionWords: new Set(rankWords(tool.description ?? "")),
    }));
  }

  get size(): number {
    return this.tools.length;
  }

  has(name: string): boolean {
    return this.names.has(name);
  }

  /** The provider-facing schema of a deferred tool (what `tool_search` returns and a bound tool costs). */
  schemaOf(tool: AntlerTool): FunctionSchema {
    let schema = this.schemas.get(tool.name);
    if (!schema) {
      const fn = convertToOpenAIFunction(tool);
      schema = { name: fn.name, description: fn.description ?? "", parameters: fn.parameters };
      this.schemas.set(tool.name, schema);
    }
    return schema;
  }

  /** 16 hex digits of SHA-256 over the sorted names and schemas. */
  get hash(): string {
    if (this.hashValue === undefined) {
      const canonical = JSON.stringify(this.tools.map((t) => [t.name, this.schemaOf(t)]));
      this.hashValue = createHash("sha256").update(canonical).digest("hex").slice(0, 16);
    }
    return this.hashValue;
  }

  /**
   * Runs a `tool_search` query: `select:a,b` (exact names), `+prefix words` (names starting with the prefix,
   * ranked by the words), or a case-insensitive regular expression over names and descriptions.
   */
  search(query: string, maxResults: number): SearchOutcome {
    const q = query.trim();
    if (q === "") {
      return { tools: [], error: 'the query is empty. Use "select:name1,name2", "+prefix words", or a regular expression.' };
    }
    if (q.toLowerCase().startsWith("select:")) return this.select(q.slice("select:".length));
    if (q.startsWith("+")) return this.prefixed(q.slice(1), maxResults);
    return this.regex(q, maxResults);
  }

  /** The tools that best match a text by words (for auto-promotion): best first, only those with a positive score. */
  rank(text: string, limit: number): AntlerTool[] {
    if (limit <= 0) return [];
    const words = [...new Set(rankWords(text))];
    if (words.length === 0) return [];
    return this.byScore(this.indexed, words)
      .filter((s) => s.score > 0)
      .slice(0, limit)
      .map((s) => s.entry.tool);
  }

  private select(list: string): SearchOutcome {
    const wanted = [
      ...new Set(
        list
          .split(",")
          .map((n) => n.trim())
          .filter((n) => n !== ""),
      ),
    ];
    if (wanted.length === 0)
      return { tools: [], error: 'select: names no tool. Write "select:name1,name2" with names from the deferred list.' };
    const found: AntlerTool[] = [];
    const missing: string[] = [];
    for (const name of wanted) {
      const entry = this.indexed.find((e) => e.tool.name === name) ?? this.indexed.find((e) => e.lowerName === name.toLowerCase());
      if (entry) found.push(entry.tool);
      else missing.push(name);
    }
    if (missing.length === 0) return { tools: found };
    const hints = missing.map((name) => {
      const near = this.closest(name);
      return near ? `${name} (did you mean ${near}?)` : name;
    });
    return { tools: found, note: `Not in the deferred list: ${hints.join(", ")}. Tools that are not deferred are already callable.` };
  }

  private prefixed(rest: string, maxResults: number): SearchOutcome {
    const [first = "", ...others] = rest.trim().split(/\s+/);
    const prefix = first.toLowerCase();
    if (prefix === "") return { tools: [], error: 'a "+" query needs a prefix right after it, e.g. "+github issue".' };
    const candidates = this.indexed.filter((e) => e.lowerName.startsWith(prefix));
    if (candidates.length === 0) {
      const prefixes = [...new Set(this.tools.map((t) => t.name.split(/[_-]/)[0] as string))].slice(0, 20);
      return { tools: [], note: `No deferred tool name starts with "${first}". Name prefixes here: ${prefixes.join(", ")}.` };
    }
    const words = [...new Set(rankWords(others.join(" ")))];
    const ranked = words.length === 0 ? candidates : this.byScore(candidates, words).map((s) => s.entry);
    return { tools: ranked.slice(0, maxResults).map((e) => e.tool) };
  }

  private regex(q: string, maxResults: number): SearchOutcome {
    let pattern: RegExp;
    try {
      pattern = new RegExp(q, "i");
    } catch (err) {
      const why = err instanceof Error ? err.message.replace(/^Invalid regular expression: /, "") : String(err);
      return {
        tools: [],
        error: `"${q}" is not a valid regular expression (${why}). Escape special characters such as ( ) [ ] + * ? with a backslash, or use "select:name" or "+prefix words".`,
      };
    }
    const hits: Array<{ entry: Indexed; score: number }> = [];
    for (const entry of this.indexed) {
      if (pattern.test(entry.tool.name)) hits.push({ entry, score: 2 });
      else if (pattern.test(entry.tool.description ?? "")) hits.push({ entry, score: 1 });
    }
    if (hits.length > 0) {
      hits.sort((a, b) => b.score - a.score);
      return { tools: hits.slice(0, maxResults).map((h) => h.entry.tool) };
    }
    // Several plain words that match nothing as one expression: try them one by one.
    const words = [...new Set(rankWords(q))];
    if (/\s/.test(q) && words.length > 1) {
      const ranked = this.byScore(this.indexed, words).filter((s) => s.score > 0);
      if (ranked.length > 0) {
        return {
          tools: ranked.slice(0, maxResults).map((s) => s.entry.tool),
          note: `Nothing matched /${q}/i as one expression; these tools match its words.`,
        };
      }
    }
    return { tools: [], note: `No deferred tool matches /${q}/i.` };
  }

  /** Name words weigh 3, a word inside the name 2, description words 1; ties keep alphabetical order. */
  private byScore(entries: readonly Indexed[], words: readonly string[]): Array<{ entry: Indexed; score: number }> {
    const scored = entries.map((entry) => {
      let score = 0;
      for (const w of words) {
        if (entry.nameWords.has(w)) score += 3;
        else if (w.length >= 3 && entry.lowerName.includes(w)) score += 2;
        else if (entry.descriptionWords.has(w)) score += 1;
      }
      return { entry, score };
    });
    return scored.sort((a, b) => b.score - a.score);
  }

  private closest(name: string): string | undefined {
    const lower = name.toLowerCase();
    let best: { name: string; d: number } | undefined;
    for (const entry of this.indexed) {
      const d = editDistance(lower, entry.lowerName);
      if (d <= Math.max(2, Math.floor(lower.length / 4)) && (!best || d < best.d)) best = { name: entry.tool.name, d };
    }
    return best?.name;
  }
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return 99;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length] as number;
}

/** A `*` / `?` glob over a whole tool name, as a RegExp. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${body}$`);
}
