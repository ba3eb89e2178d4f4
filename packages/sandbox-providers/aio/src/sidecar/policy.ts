import { parseIPv4 } from "@antler/tools-web/ssrf";
import { z } from "zod";

/**
 * What a restricted sandbox may reach. Host patterns are exact names (`pypi.org`), `*.` suffixes that match
 * subdomains at any depth (`*.pythonhosted.org`), or `*` for any name. Deny wins over allow; an empty allow
 * list allows every name the deny list does not name. Only `ports` may be reached.
 */
export const egressPolicySchema = z.strictObject({
  label: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_.-]{0,62}$/, "1-63 of a-z 0-9 _ . - starting with a letter or digit")
    .describe("Name of this policy; a warm or discovered sandbox is reused only for a request with the same label."),
  allow: z.array(z.string().min(1)).default([]).describe("Host patterns the sandbox may reach; empty = any not denied."),
  deny: z.array(z.string().min(1)).default([]).describe("Host patterns refused even when allowed."),
  ports: z.array(z.number().int().min(1).max(65535)).default([80, 443]).describe("Destination ports the sandbox may reach."),
  allow_private_cidrs: z
    .array(z.string().regex(/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/, "an IPv4 CIDR such as 10.20.0.0/16"))
    .default([])
    .describe("IPv4 ranges treated as reachable although not public (an internal package mirror). Cloud metadata addresses stay blocked."),
});

export type EgressPolicy = z.output<typeof egressPolicySchema>;
export type EgressPolicyInput = z.input<typeof egressPolicySchema>;

export type PolicyVerdict = { allowed: true } | { allowed: false; reason: string };

/** Lower-cased, without a trailing dot or IPv6 brackets. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  return h.endsWith(".") ? h.slice(0, -1) : h;
}

export function hostMatches(pattern: string, host: string): boolean {
  const p = normalizeHost(pattern);
  if (p === "*") return true;
  if (p.startsWith("*.")) return host.endsWith(p.slice(1)) && host.length > p.length - 1;
  return p === host;
}

/** The policy's verdict on a destination name and port. Pure: no DNS is involved. */
export function decideEgress(policy: EgressPolicy, rawHost: string, port: number): PolicyVerdict {
  const host = normalizeHost(rawHost);
  if (!policy.ports.includes(port)) {
    return { allowed: false, reason: `port ${port} is not in the policy's ports (${policy.ports.join(", ")})` };
  }
  const denied = policy.deny.find((p) => hostMatches(p, host));
  if (denied !== undefined) return { allowed: false, reason: `${host} matches the deny pattern "${denied}"` };
  if (policy.allow.length > 0 && !policy.allow.some((p) => hostMatches(p, host))) {
    return { allowed: false, reason: `${host} matches no allow pattern of policy "${policy.label}"` };
  }
  return { allowed: true };
}

/** Whether an IPv4 address lies in one of the operator's private-but-allowed ranges. */
export function inAllowedPrivateRange(policy: EgressPolicy, address: string): boolean {
  const value = parseIPv4(address);
  if (value === undefined || !/^\d+\.\d+\.\d+\.\d+$/.test(address)) return false;
  return policy.allow_private_cidrs.some((cidr) => {
    const [base, bits] = cidr.split("/") as [string, string];
    const baseValue = parseIPv4(base);
    const size = 2 ** (32 - Number(bits));
    if (baseValue === undefined) return false;
    const start = baseValue - (baseValue % size);
    return value >= start && value < start + size;
  });
}

/** The policy with one more allowed destination (a user's approval of a denial). */
export function withApproval(policy: EgressPolicy, host: string, port: number): EgressPolicy {
  const h = normalizeHost(host);
  return {
    ...policy,
    allow: policy.allow.length === 0 || policy.allow.includes(h) ? policy.allow : [...policy.allow, h],
    deny: policy.deny.filter((p) => normalizeHost(p) !== h),
    ports: policy.ports.includes(port) ? policy.ports : [...policy.ports, port],
  };
}
