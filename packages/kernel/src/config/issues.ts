import { type Document, isMap, isNode, isPair, isScalar, isSeq, type LineCounter, type Node } from "yaml";
import type { z } from "zod";
import { type ConfigIssue, formatPath } from "./format.js";
import { type AnySchema, objectKeysAt, type PathSegment } from "./introspect.js";
import { didYouMean } from "./suggest.js";

export { type ConfigIssue, formatIssue, formatPath } from "./format.js";
export type { PathSegment };

/** The YAML source of a config, kept so that issues can point at a line and column. */
export interface ConfigSource {
  readonly file: string | null;
  readonly doc: Document | null;
  readonly lineCounter: LineCounter | null;
}

/** Line and column (1-based) of the node at `segments`; for a key that is not there, its closest ancestor. */
export function locate(source: ConfigSource, segments: readonly PathSegment[], keyName?: string): { line?: number; column?: number } {
  const { doc, lineCounter } = source;
  if (!doc || !lineCounter) return {};
  let node: unknown = doc.contents;
  let best: Node | null = isNode(node) ? node : null;
  for (const seg of segments) {
    const next = childOf(node, seg);
    if (next === undefined) break;
    node = next.value;
    best = next.anchor;
  }
  if (keyName !== undefined && isMap(node)) {
    const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === keyName);
    if (pair && isNode(pair.key)) best = pair.key;
  }
  const offset = best?.range?.[0];
  if (offset === undefined) return {};
  const pos = lineCounter.linePos(offset);
  return { line: pos.line, column: pos.col };
}

function childOf(node: unknown, seg: PathSegment): { value: unknown; anchor: Node } | undefined {
  if (isMap(node)) {
    const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
    if (!pair) return undefined;
    const anchor = isNode(pair.value) ? pair.value : (pair.key as Node);
    return { value: pair.value, anchor };
  }
  if (isSeq(node) && typeof seg === "number") {
    const item = node.items[seg];
    return isNode(item) ? { value: item, anchor: item } : undefined;
  }
  return undefined;
}

type ZodIssue = z.core.$ZodIssue;

/** Turns zod issues into located config issues, with did-you-mean suggestions for unknown keys. */
export function toConfigIssues(
  zodIssues: readonly ZodIssue[],
  schema: AnySchema,
  source: ConfigSource,
  prefix: readonly PathSegment[] = [],
  data?: unknown,
): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of flattenUnions(zodIssues, data)) {
    const local = issue.path.filter((p): p is PathSegment => typeof p !== "symbol");
    const segments = [...prefix, ...local];
    if (issue.code === "unrecognized_keys") {
      const known = objectKeysAt(schema, local);
      for (const key of issue.keys) {
        const keySegments = [...segments, key];
        out.push({
          path: formatPath(keySegments),
          segments: keySegments,
          message: `unknown key "${key}"${known.length ? `; allowed here: ${known.join(", ")}` : ""}`,
          suggestion: didYouMean(key, known),
          ...locate(source, segments, key),
        });
      }
      continue;
    }
    out.push({ path: formatPath(segments), segments, message: issue.message, ...locate(source, segments) });
  }
  return out;
}

/** zod reports a failed union as one issue holding each branch's issues; keep the branch that got furthest. */
function flattenUnions(issues: readonly ZodIssue[], data: unknown): ZodIssue[] {
  const out: ZodIssue[] = [];
  for (const issue of issues) {
    if (issue.code !== "invalid_union" || !("errors" in issue) || issue.errors.length === 0) {
      out.push(issue);
      continue;
    }
    const branches = issue.errors as ZodIssue[][];
    const scored = branches.map((branch) => ({
      branch,
      // A branch that failed on the root type is the wrong branch; prefer those that failed deeper.
      score: branch.every((i) => i.code === "invalid_type" && i.path.length === 0)
        ? 0
        : 1 + Math.max(0, ...branch.map((i) => i.path.length)),
    }));
    scored.sort((a, b) => b.score - a.score);
    const chosen = scored[0];
    if (!chosen || chosen.score === 0) {
      out.push(issue);
      continue;
    }
    const nested = flattenUnions(chosen.branch, data).map((i) => ({ ...i, path: [...issue.path, ...i.path] }) as ZodIssue);
    out.push(...nested);
  }
  return out;
}
