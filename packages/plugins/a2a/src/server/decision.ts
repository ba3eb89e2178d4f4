import type { Message } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";

const HOW =
  'Answer with the text "approve" or "reject: <reason>", or one data part {"decision": "approve"}, ' +
  '{"decision": "reject", "reason": "..."}, {"decision": "edit", "args": {...}} or {"decisions": {"<tool_call_id>": {...}}}; the task still waits.';

function isDecisionObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && ("decision" in value || "decisions" in value);
}

/** The text form: `approve` (also `approved`, `yes`), `reject` or `reject: <reason>` (also `deny`, `no`); or a decision's JSON. */
function textDecision(text: string): Record<string, unknown> | undefined {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    try {
      const parsed = JSON.parse(trimmed) as unknown;
      if (isDecisionObject(parsed)) return parsed;
    } catch {
      // Not JSON: read as words below.
    }
    return undefined;
  }
  const match = /^(approve|approved|yes|reject|rejected|deny|denied|no)\b\s*[:\-–]?\s*([\s\S]*)$/i.exec(trimmed);
  if (!match) return undefined;
  const word = (match[1] ?? "").toLowerCase();
  const rest = (match[2] ?? "").trim();
  if (word === "approve" || word === "approved" || word === "yes") return rest === "" ? { decision: "approve" } : undefined;
  return rest === "" ? { decision: "reject" } : { decision: "reject", reason: rest };
}

/**
 * The decision a message on a task paused for approval carries, as the runtime's resume takes it (the guardrails'
 * `{ decision }` or `{ decisions }`; the runtime checks it against the pending calls). One data part with
 * `decision`/`decisions` wins; otherwise the text parts are read. Anything else is invalid params, and the run
 * stays paused.
 */
export function approvalDecision(message: Message): Record<string, unknown> {
  const data = message.parts.flatMap((p) => (p.content?.$case === "data" ? [p.content.value as unknown] : []));
  const decisions = data.filter(isDecisionObject);
  if (decisions.length > 1) throw new RequestMalformedError(`the message has ${decisions.length} decision data parts; send one. ${HOW}`);
  if (decisions[0]) return decisions[0];
  if (data.length > 0) throw new RequestMalformedError(`the data part has no "decision" or "decisions" key. ${HOW}`);
  const text = message.parts
    .map((p) => (p.content?.$case === "text" ? p.content.value : ""))
    .join("\n")
    .trim();
  if (text === "") throw new RequestMalformedError(`the task waits for an approval decision and the message has none. ${HOW}`);
  const decision = textDecision(text);
  if (!decision) throw new RequestMalformedError(`"${text.length > 80 ? `${text.slice(0, 80)}…` : text}" is not a decision. ${HOW}`);
  return decision;
}
