import { createHmac, timingSafeEqual } from "node:crypto";

/** Why a webhook request was refused, or undefined when its signature holds. */
export type SignatureProblem = "missing headers" | "stale timestamp" | "bad signature";

/**
 * Checks the headers Slack signs a request with before the body is read: both present, the timestamp within
 * `toleranceSeconds` of `nowMs` (a replayed request is older than that).
 */
export function checkSignatureHeaders(
  headers: Headers,
  toleranceSeconds: number,
  nowMs = Date.now(),
): { timestamp: string; signature: string } | SignatureProblem {
  const timestamp = headers.get("x-slack-request-timestamp");
  const signature = headers.get("x-slack-signature");
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return "missing headers";
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > toleranceSeconds) return "stale timestamp";
  return { timestamp, signature };
}

/** Slack's v0 signature: `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<raw body>` keyed by the signing secret. */
export function slackSignature(secret: string, timestamp: string, rawBody: string | Uint8Array): string {
  const hmac = createHmac("sha256", secret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(rawBody);
  return `v0=${hmac.digest("hex")}`;
}

/** Compares the request's signature with the expected one in constant time. */
export function signatureMatches(secret: string, timestamp: string, rawBody: Uint8Array, given: string): boolean {
  const expected = Buffer.from(slackSignature(secret, timestamp, rawBody));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
