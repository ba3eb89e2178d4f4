import { redactText } from "../config/redact.js";

/** A driver error as one line for a message: never a password, and never empty. */
export function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return redactText(String(cause));
  // Node reports a refused dual-stack connect ("localhost") as an AggregateError with an empty message.
  const code = (cause as { code?: unknown }).code;
  return redactText(cause.message || (typeof code === "string" ? code : cause.name));
}
