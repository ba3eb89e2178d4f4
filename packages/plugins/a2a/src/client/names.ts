import { createHash, randomBytes } from "node:crypto";

export const INVOKE_A2A_AGENT_TOOL = "invoke_a2a_agent";

/** The custom events a call streams to the run (and so to its event log and every front end). */
export const A2A_EVENT = {
  started: "a2a_task_started",
  status: "a2a_task_status",
  artifact: "a2a_task_artifact",
  ended: "a2a_task_ended",
} as const;

/** A card, endpoint or redirect URL of a remote agent that the SSRF guard refused. */
export const A2A_URL_REFUSED = "ANTLER_ERR_A2A_URL_REFUSED";

const W3C_TRACE_ID = /^(?!0{32})[0-9a-f]{32}$/;

/**
 * A W3C `traceparent` for a request of the trace `traceId`: the id itself when it is 32 hex digits (as Antler's
 * generated ids are), otherwise its SHA-256 cut to 32 hex digits, so the same Antler trace always maps to the same
 * W3C trace; a fresh span id per request, sampled.
 */
export function traceparentFor(traceId: string): string {
  const id = W3C_TRACE_ID.test(traceId) ? traceId : createHash("sha256").update(traceId).digest("hex").slice(0, 32);
  return `00-${id}-${randomBytes(8).toString("hex")}-01`;
}
