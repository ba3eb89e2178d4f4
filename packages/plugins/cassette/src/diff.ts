import { type NormalizedRequest, stableStringify } from "./normalize.js";

/** Renders a request as lines a person can read in a diff: one header line per message, its text indented below. */
export function renderRequestLines(request: NormalizedRequest): string[] {
  const lines = [`tools: ${request.tools.length ? request.tools.join(", ") : "(none)"}`];
  request.messages.forEach((message, i) => {
    lines.push(`[${i}] ${message.role}${message.tool_call_id ? ` (tool_call_id ${message.tool_call_id})` : ""}`);
    if (message.content !== "") for (const text of message.content.split("\n")) lines.push(`    ${text}`);
    for (const call of message.tool_calls ?? []) {
      lines.push(`    -> ${call.name}(${JSON.stringify(call.args)})${call.id ? ` id=${call.id}` : ""}`);
    }
  });
  return lines;
}

type Op = { kind: " " | "-" | "+"; text: string };

// Above this many cells the quadratic table costs more than the diff is worth; the changed middle is then
// shown as all-removed then all-added, which is still a correct (if less minimal) diff.
const MAX_TABLE_CELLS = 4_000_000;

function diffOps(a: readonly string[], b: readonly string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const head: Op[] = a.slice(0, start).map((text) => ({ kind: " ", text }));
  const tail: Op[] = a.slice(endA).map((text) => ({ kind: " ", text }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const n = midA.length;
  const m = midB.length;
  const middle: Op[] = [];
  if (n * m > MAX_TABLE_CELLS) {
    for (const text of midA) middle.push({ kind: "-", text });
    for (const text of midB) middle.push({ kind: "+", text });
    return [...head, ...middle, ...tail];
  }
  // lcs[i][j] = length of the longest common subsequence of midA[i..] and midB[j..].
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] =
        midA[i] === midB[j]
          ? (lcs[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(lcs[(i + 1) * width + j] ?? 0, lcs[i * width + j + 1] ?? 0);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (midA[i] === midB[j]) {
      middle.push({ kind: " ", text: midA[i++] as string });
      j++;
    } else if ((lcs[(i + 1) * width + j] ?? 0) >= (lcs[i * width + j + 1] ?? 0)) {
      middle.push({ kind: "-", text: midA[i++] as string });
    } else {
      middle.push({ kind: "+", text: midB[j++] as string });
    }
  }
  while (i < n) middle.push({ kind: "-", text: midA[i++] as string });
  while (j < m) middle.push({ kind: "+", text: midB[j++] as string });
  return [...head, ...middle, ...tail];
}

/**
 * A unified-style diff of two line lists: `--- labelA` / `+++ labelB` headers, then `@@ -a,n +b,m @@` hunks
 * with `context` unchanged lines around each change. Empty when the lists are equal.
 */
export function unifiedLineDiff(a: readonly string[], b: readonly string[], labels: { a: string; b: string }, context = 3): string {
  const ops = diffOps(a, b);
  const changed = ops.map((op, k) => (op.kind === " " ? -1 : k)).filter((k) => k >= 0);
  if (changed.length === 0) return "";
  const out = [`--- ${labels.a}`, `+++ ${labels.b}`];
  // Group changes whose context windows touch into one hunk.
  const hunks: Array<[number, number]> = [];
  for (const k of changed) {
    const from = Math.max(0, k - context);
    const to = Math.min(ops.length - 1, k + context);
    const last = hunks[hunks.length - 1];
    if (last && from <= last[1] + 1) last[1] = to;
    else hunks.push([from, to]);
  }
  for (const [from, to] of hunks) {
    let lineA = 1;
    let lineB = 1;
    for (let k = 0; k < from; k++) {
      const kind = ops[k]?.kind;
      if (kind !== "+") lineA++;
      if (kind !== "-") lineB++;
    }
    const slice = ops.slice(from, to + 1);
    const countA = slice.filter((op) => op.kind !== "+").length;
    const countB = slice.filter((op) => op.kind !== "-").length;
    out.push(`@@ -${lineA},${countA} +${lineB},${countB} @@`);
    for (const op of slice) out.push(`${op.kind}${op.text}`);
  }
  return out.join("\n");
}

/** How many messages two requests share from the start. */
export function sharedLeadingMessages(a: NormalizedRequest, b: NormalizedRequest): number {
  let k = 0;
  while (k < a.messages.length && k < b.messages.length && stableStringify(a.messages[k]) === stableStringify(b.messages[k])) k++;
  return k;
}

/** How many lines two line lists have in common (in order): a tie-breaker for "closest recording". */
export function commonLineCount(a: readonly string[], b: readonly string[]): number {
  return diffOps(a, b).filter((op) => op.kind === " ").length;
}
