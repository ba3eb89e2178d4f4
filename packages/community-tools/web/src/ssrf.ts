import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { UrlCheck, UrlCheckOptions, ValidatePublicHttpUrl } from "./contract.js";

/** Why an address is not public. `metadata` addresses stay blocked even with `allow_private_addresses`. */
export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "cgnat"
  | "multicast"
  | "unspecified"
  | "broadcast"
  | "reserved"
  | "ipv4-mapped"
  | "metadata";

export interface AddressVerdict {
  readonly class: AddressClass;
  /** Human text for refusals, e.g. "a loopback address (127.0.0.0/8)". */
  readonly description: string;
}

/** Cloud instance-metadata endpoints: AWS/GCP/Azure/OCI (IPv4 and AWS's IPv6), Alibaba. Never reachable. */
const METADATA_ADDRESSES = new Map<string, string>([
  ["169.254.169.254", "the cloud instance-metadata endpoint (AWS, GCP, Azure, OCI)"],
  ["169.254.170.2", "the AWS ECS task-metadata endpoint"],
  ["100.100.100.200", "the Alibaba Cloud metadata endpoint"],
  ["fd00:ec2::254", "the AWS instance-metadata endpoint (IPv6)"],
]);

const METADATA_HOSTNAMES = new Set([
  "metadata.google.internal",
  "metadata.goog",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal",
]);

interface V4Range {
  readonly base: number;
  readonly bits: number;
  readonly class: Exclude<AddressClass, "public" | "metadata" | "ipv4-mapped">;
  readonly cidr: string;
  readonly label: string;
}

const v4 = (cidr: string, cls: V4Range["class"], label: string): V4Range => {
  const [addr, bits] = cidr.split("/") as [string, string];
  return { base: parseIPv4(addr) as number, bits: Number(bits), class: cls, cidr, label };
};

// Ordered most specific first where ranges nest.
const V4_RANGES: readonly V4Range[] = [
  v4("255.255.255.255/32", "broadcast", "the broadcast address"),
  v4("0.0.0.0/8", "unspecified", 'an unspecified ("this network") address'),
  v4("10.0.0.0/8", "private", "a private address"),
  v4("100.64.0.0/10", "cgnat", "a carrier-grade NAT (shared) address"),
  v4("127.0.0.0/8", "loopback", "a loopback address"),
  v4("169.254.0.0/16", "link-local", "a link-local address"),
  v4("172.16.0.0/12", "private", "a private address"),
  v4("192.0.0.0/24", "reserved", "an IETF protocol-assignment address"),
  v4("192.0.2.0/24", "reserved", "a documentation address (TEST-NET-1)"),
  v4("192.88.99.0/24", "reserved", "a 6to4 relay anycast address"),
  v4("192.168.0.0/16", "private", "a private address"),
  v4("198.18.0.0/15", "reserved", "a benchmarking address"),
  v4("198.51.100.0/24", "reserved", "a documentation address (TEST-NET-2)"),
  v4("203.0.113.0/24", "reserved", "a documentation address (TEST-NET-3)"),
  v4("224.0.0.0/4", "multicast", "a multicast address"),
  v4("240.0.0.0/4", "reserved", "a reserved (class E) address"),
];

/**
 * Parses an IPv4 address in any form the WHATWG URL parser and `inet_aton` accept: dotted with 1–4 parts, each
 * decimal, octal (leading 0) or hex (0x), e.g. `2130706433`, `0177.0.0.1`, `0x7f.1`. Returns the 32-bit value,
 * or undefined when `text` is not an IPv4 address.
 */
export function parseIPv4(text: string): number | undefined {
  const parts = text.endsWith(".") ? text.slice(0, -1).split(".") : text.split(".");
  if (parts.length === 0 || parts.length > 4) return undefined;
  const nums: number[] = [];
  for (const part of parts) {
    if (part === "") return undefined;
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(part)) n = part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) n = Number.parseInt(part.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(part)) n = Number(part);
    else return undefined;
    if (!Number.isFinite(n)) return undefined;
    nums.push(n);
  }
  const last = nums.pop() as number;
  if (nums.some((n) => n > 255)) return undefined;
  if (last >= 256 ** (4 - nums.length)) return undefined;
  let value = last;
  nums.forEach((n, i) => {
    value += n * 256 ** (3 - i);
  });
  return value;
}

export function formatIPv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join(".");
}

/** Expands an IPv6 address (with an optional dotted IPv4 tail) into its eight 16-bit groups. */
export function parseIPv6(text: string): number[] | undefined {
  let s = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (isIP(s) !== 6) return undefined;
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(":");
  if (s.slice(lastColon + 1).includes(".")) {
    const v4value = parseIPv4(s.slice(lastColon + 1));
    if (v4value === undefined) return undefined;
    tail = [Math.floor(v4value / 65536), v4value % 65536];
    s = `${s.slice(0, lastColon + 1)}${tail.length ? "0:0" : ""}`;
  }
  const [head, rest] = s.includes("::") ? (s.split("::") as [string, string]) : [s, undefined];
  const headGroups = head === "" ? [] : head.split(":");
  const restGroups = rest === undefined || rest === "" ? [] : rest.split(":");
  const missing = 8 - headGroups.length - restGroups.length;
  if (rest === undefined && missing !== 0) return undefined;
  const groups = [...headGroups, ...Array<string>(Math.max(missing, 0)).fill("0"), ...restGroups].map((g) => Number.parseInt(g, 16));
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return undefined;
  if (tail.length) {
    groups[6] = tail[0] as number;
    groups[7] = tail[1] as number;
  }
  return groups;
}

function formatIPv6(groups: readonly number[]): string {
  return groups.map((g) => g.toString(16)).join(":");
}

// Keyed by the uncompressed form formatIPv6 produces, e.g. fd00:ec2:0:0:0:0:0:254.
const METADATA_V6 = new Map(
  [...METADATA_ADDRESSES].flatMap(([address, label]) => {
    const groups = address.includes(":") ? parseIPv6(address) : undefined;
    return groups ? [[formatIPv6(groups), label] as const] : [];
  }),
);

function classifyIPv4Value(value: number): AddressVerdict {
  const text = formatIPv4(value);
  const metadata = METADATA_ADDRESSES.get(text);
  if (metadata) return { class: "metadata", description: metadata };
  for (const range of V4_RANGES) {
    const size = 2 ** (32 - range.bits);
    if (value >= range.base && value < range.base + size) return { class: range.class, description: `${range.label} (${range.cidr})` };
  }
  return { class: "public", description: "a public address" };
}

function classifyIPv6Groups(g: readonly number[]): AddressVerdict {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const metadata = METADATA_V6.get(formatIPv6(g));
  if (metadata) return { class: "metadata", description: metadata };
  const embedded = g6 * 65536 + g7;
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(8)) return { class: "unspecified", description: "the unspecified address (::)" };
  if (zeroTo(7) && g7 === 1) return { class: "loopback", description: "the loopback address (::1)" };
  if (zeroTo(5) && g5 === 0xffff) {
    const inner = classifyIPv4Value(embedded);
    return {
      class: "ipv4-mapped",
      description: `an IPv4-mapped IPv6 address (::ffff:0:0/96) wrapping ${formatIPv4(embedded)}, ${inner.description}`,
    };
  }
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) {
    return { class: "ipv4-mapped", description: `an IPv4-translated IPv6 address (::ffff:0:0:0/96) wrapping ${formatIPv4(embedded)}` };
  }
  if (zeroTo(6)) return { class: "reserved", description: `an IPv4-compatible IPv6 address (::/96) wrapping ${formatIPv4(embedded)}` };
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    const inner = classifyIPv4Value(embedded);
    if (inner.class !== "public")
      return { class: inner.class, description: `a NAT64 address wrapping ${formatIPv4(embedded)}, ${inner.description}` };
    return { class: "public", description: "a public address (NAT64)" };
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return { class: "private", description: "a local-use NAT64 address (64:ff9b:1::/48)" };
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return { class: "reserved", description: "a discard-only address (100::/64)" };
  if (g0 === 0x2001 && g1 === 0)
    return { class: "reserved", description: "a Teredo tunnel address (2001::/32), which embeds another address" };
  if (g0 === 0x2001 && g1 === 0xdb8) return { class: "reserved", description: "a documentation address (2001:db8::/32)" };
  if (g0 === 0x2002) {
    const inner = classifyIPv4Value(g1 * 65536 + g2);
    if (inner.class !== "public") {
      return { class: inner.class, description: `a 6to4 address wrapping ${formatIPv4(g1 * 65536 + g2)}, ${inner.description}` };
    }
  }
  if ((g0 & 0xfe00) === 0xfc00) return { class: "private", description: "a unique-local address (fc00::/7)" };
  if ((g0 & 0xffc0) === 0xfe80) return { class: "link-local", description: "a link-local address (fe80::/10)" };
  if ((g0 & 0xffc0) === 0xfec0) return { class: "private", description: "a site-local address (fec0::/10)" };
  if ((g0 & 0xff00) === 0xff00) return { class: "multicast", description: "a multicast address (ff00::/8)" };
  return { class: "public", description: "a public address" };
}

/**
 * Classifies one IP address (any IPv4 notation, or IPv6 with or without brackets). Returns undefined when
 * `address` is not an IP address at all (a DNS name).
 */
export function classifyAddress(address: string): AddressVerdict | undefined {
  const v4value = parseIPv4(address);
  if (v4value !== undefined) return classifyIPv4Value(v4value);
  const groups = parseIPv6(address);
  if (groups) return classifyIPv6Groups(groups);
  return undefined;
}

export type LookupFunction = NonNullable<UrlCheckOptions["lookup"]>;

/** The default resolver: every A and AAAA answer, as the OS resolver (getaddrinfo) sees them. */
export const systemLookup: LookupFunction = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

const ALLOWED_PROTOCOLS = new Set(["http:", "https:"]);

function refuse(reason: string): UrlCheck {
  return { ok: false, reason };
}

function isLocalhostName(host: string): boolean {
  return host === "localhost" || host.endsWith(".localhost") || host === "localhost.localdomain";
}

/**
 * The SSRF guard: accepts only http(s) URLs whose host resolves exclusively to public addresses. Every DNS
 * answer is checked (a name with one private answer is refused), IPv4 in decimal, octal and hex forms is
 * normalized first, and IPv4-mapped IPv6 is refused outright. With `allowPrivateAddresses` the range checks
 * are skipped, except cloud-metadata endpoints, which stay blocked: no intentional internal target lives there.
 *
 * Callers must run it again on every redirect hop (`createGuardedFetch` does).
 */
export const validatePublicHttpUrl: ValidatePublicHttpUrl = async (input, options = {}) => {
  let url: URL;
  try {
    url = input instanceof URL ? new URL(input.href) : new URL(String(input).trim());
  } catch {
    return refuse(`${JSON.stringify(String(input).slice(0, 200))} is not a valid absolute URL`);
  }
  if (!ALLOWED_PROTOCOLS.has(url.protocol)) {
    return refuse(`scheme "${url.protocol.replace(/:$/, "")}" is not allowed; only http and https URLs can be fetched`);
  }
  const allowPrivate = options.allowPrivateAddresses === true;
  // WHATWG URL parsing already turned 2130706433, 0177.0.0.1 and 0x7f.1 into 127.0.0.1, and lower-cased names.
  const host = url.hostname.replace(/\.$/, "");
  if (host === "") return refuse(`${url.href} has no host`);
  const bare = host.startsWith("[") ? host.slice(1, -1) : host;

  const literal = classifyAddress(bare);
  if (literal) {
    const verdict = literal;
    if (verdict.class === "metadata") return refuse(`host ${bare} is ${verdict.description}, which is always blocked`);
    if (verdict.class !== "public" && !allowPrivate) return refuse(`host ${bare} is ${verdict.description}`);
    return { ok: true, url, addresses: [bare] };
  }

  if (METADATA_HOSTNAMES.has(host)) return refuse(`host ${host} is the cloud instance-metadata service, which is always blocked`);
  if (isLocalhostName(host) && !allowPrivate) return refuse(`host ${host} is a loopback name`);

  let answers: { address: string; family: 4 | 6 }[];
  try {
    answers = await (options.lookup ?? systemLookup)(host);
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    return refuse(`host ${host} could not be resolved${typeof code === "string" ? ` (${code})` : ""}`);
  }
  if (answers.length === 0) return refuse(`host ${host} resolved to no addresses`);
  for (const answer of answers) {
    const verdict = classifyAddress(answer.address);
    if (!verdict) return refuse(`host ${host} resolved to ${JSON.stringify(answer.address)}, which is not an IP address`);
    if (verdict.class === "metadata")
      return refuse(`host ${host} resolves to ${answer.address}, ${verdict.description}, which is always blocked`);
    if (verdict.class !== "public" && !allowPrivate) return refuse(`host ${host} resolves to ${answer.address}, ${verdict.description}`);
  }
  return { ok: true, url, addresses: answers.map((a) => a.address) };
};
