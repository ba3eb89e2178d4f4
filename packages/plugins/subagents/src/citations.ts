import type { CitationCheck, CitationProblem, CitationReport, ToolReceipt } from "./contract.js";

/** A receipt citation in a report: `[r3 bash]`, or a bare `[r3]`. Tool names are the ones tools may have. */
const CITATION = /\[r(\d{1,6})(?:\s+([A-Za-z0-9_.:-]{1,128}))?\]/g;
/** Citations listed one by one in the report; the counts cover all of them. */
const MAX_CHECKS = 100;

/**
 * Checks a subagent's `[rN tool]` citations against the receipts the runtime recorded: each cited id must name a
 * receipt, the tool named with it must be that receipt's tool, and a citation of a failed call is flagged (the
 * report may present it as a success). It checks that the evidence cited exists, not that the claim is true.
 */
export function checkCitations(report: string, receipts: readonly ToolReceipt[]): CitationReport {
  const byId = new Map(receipts.map((r) => [r.id, r]));
  const seen = new Set<string>();
  const checks: CitationCheck[] = [];
  let total = 0;
  for (const match of report.matchAll(CITATION)) {
    const text = match[0];
    if (seen.has(text)) continue;
    seen.add(text);
    total += 1;
    const id = `r${Number(match[1])}`;
    const tool = match[2];
    const receipt = byId.get(id);
    let problem: CitationProblem | undefined;
    if (!receipt) problem = "unknown_receipt";
    else if (tool !== undefined && tool !== receipt.tool) problem = "wrong_tool";
    else if (receipt.status === "error") problem = "failed_call";
    if (checks.length < MAX_CHECKS) {
      checks.push({ citation: text, receipt: id, ...(problem ? { problem } : {}), ...(receipt ? { receipt_tool: receipt.tool } : {}) });
    }
  }
  const invalid = checks.filter((c) => c.problem === "unknown_receipt" || c.problem === "wrong_tool").length;
  const cited = new Set(checks.filter((c) => c.problem !== "unknown_receipt").map((c) => c.receipt));
  const verdict = total === 0 ? "NONE" : invalid > 0 ? "INCONSISTENT" : "CONSISTENT";
  return { verdict, total, invalid, uncited_receipts: receipts.filter((r) => !cited.has(r.id)).length, checks };
}

const PROBLEM_TEXT: Record<CitationProblem, string> = {
  unknown_receipt: "no such receipt",
  wrong_tool: "receipt is of another tool",
  failed_call: "that call failed",
};

/** The lead's view of the check, one line per citation with a problem. */
export function formatCitations(report: CitationReport, receiptCount: number): string {
  if (report.verdict === "NONE") {
    return receiptCount > 0
      ? `Citations: NONE (the report cites none of the ${receiptCount} receipts; its claims are unverified)`
      : "Citations: NONE";
  }
  const head = `Citations: ${report.verdict} (${report.total} checked, ${report.invalid} invalid, ${report.uncited_receipts} receipts uncited)`;
  const lines = report.checks
    .filter((c) => c.problem)
    .map(
      (c) =>
        `- ${c.citation}: ${PROBLEM_TEXT[c.problem as CitationProblem]}${c.receipt_tool ? ` (${c.receipt} is ${c.receipt_tool})` : ""}`,
    );
  return [head, ...lines].join("\n");
}
