/**
 * A strict parser of HTTP/1.x request heads for the egress proxy. Anything a lenient server and a strict one
 * could read differently (the root of request smuggling) is refused, never repaired: obs-folds, bare CR or LF,
 * whitespace before a colon, duplicate or disagreeing framing headers, a Host that is missing, repeated or
 * disagrees with an absolute-form target.
 */

export const MAX_HEAD_BYTES = 16 * 1024;

export interface RequestHead {
  method: string;
  /** The request target as sent. */
  target: string;
  version: "1.0" | "1.1";
  /** In order, names as sent. */
  headers: Array<[name: string, value: string]>;
  /** Destination host (no brackets) and port, from the CONNECT authority or the absolute-form target. */
  host: string;
  port: number;
  /** Origin-form path and query for forwarding (absent for CONNECT). */
  path: string;
  framing: { kind: "none" } | { kind: "length"; length: number } | { kind: "chunked" };
}

export type HeadParse = { ok: true; head: RequestHead } | { ok: false; reason: string };

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A control character other than HTAB, which a header value must not contain. */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return true;
  }
  return false;
}
const REG_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i;
const IPV6_LITERAL = /^\[[0-9a-f:.]+\]$/i;

/** Index just past the blank line ending the head, or -1 when it has not arrived yet. */
export function headEnd(buffer: Buffer): number {
  const at = buffer.indexOf("\r\n\r\n");
  return at < 0 ? -1 : at + 4;
}

/** Splits `host[:port]`; refuses userinfo, empty hosts and ports outside 1-65535. */
export function parseAuthority(text: string, defaultPort: number | undefined): { host: string; port: number } | undefined {
  if (text.includes("@") || text === "") return undefined;
  let host: string;
  let portText: string | undefined;
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close < 0) return undefined;
    host = text.slice(0, close + 1);
    const rest = text.slice(close + 1);
    if (rest !== "" && !rest.startsWith(":")) return undefined;
    portText = rest === "" ? undefined : rest.slice(1);
    if (!IPV6_LITERAL.test(host)) return undefined;
    host = host.slice(1, -1);
  } else {
    const colon = text.lastIndexOf(":");
    host = colon < 0 ? text : text.slice(0, colon);
    portText = colon < 0 ? undefined : text.slice(colon + 1);
    if (!REG_NAME.test(host)) return undefined;
  }
  let port: number;
  if (portText === undefined) {
    if (defaultPort === undefined) return undefined;
    port = defaultPort;
  } else {
    if (!/^\d{1,5}$/.test(portText)) return undefined;
    port = Number(portText);
  }
  if (port < 1 || port > 65535) return undefined;
  return { host: host.toLowerCase().replace(/\.$/, ""), port };
}

/** Parses the head `raw` (everything up to and including the blank line). */
export function parseRequestHead(raw: Buffer): HeadParse {
  if (raw.length > MAX_HEAD_BYTES) return { ok: false, reason: `the header block exceeds ${MAX_HEAD_BYTES} bytes` };
  const text = raw.toString("latin1");
  if (!text.endsWith("\r\n\r\n")) return { ok: false, reason: "the header block does not end with CRLF CRLF" };
  const body = text.slice(0, -4);
  // Every line break must be CRLF: a bare CR or LF is read as a break by some parsers and not by others.
  if (/\r(?!\n)|(?<!\r)\n/.test(body)) return { ok: false, reason: "a bare CR or LF in the header block" };
  const lines = body.split("\r\n");
  const requestLine = /^([^ ]+) ([^ ]+) HTTP\/(1\.[01])$/.exec(lines[0] ?? "");
  if (!requestLine) return { ok: false, reason: "a malformed request line" };
  const [, method = "", target = "", version = "1.1"] = requestLine;
  if (!TOKEN.test(method)) return { ok: false, reason: "a malformed method" };
  const headers: Array<[string, string]> = [];
  for (const line of lines.slice(1)) {
    if (line.startsWith(" ") || line.startsWith("\t")) return { ok: false, reason: "an obs-fold (a header line continued on the next)" };
    const colon = line.indexOf(":");
    if (colon <= 0) return { ok: false, reason: "a header line without a name and colon" };
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) return { ok: false, reason: `a malformed header name ${JSON.stringify(name.slice(0, 40))}` };
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
    if (hasControlCharacter(value)) return { ok: false, reason: `a control character in header ${name}` };
    headers.push([name, value]);
  }
  const all = (n: string) => headers.filter(([k]) => k.toLowerCase() === n).map(([, v]) => v);

  const hosts = all("host");
  if (hosts.length > 1) return { ok: false, reason: "more than one Host header" };
  if (version === "1.1" && hosts.length === 0) return { ok: false, reason: "no Host header (required in HTTP/1.1)" };

  const lengths = all("content-length").flatMap((v) => v.split(",").map((s) => s.trim()));
  const encodings = all("transfer-encoding");
  if (lengths.length > 0 && encodings.length > 0) return { ok: false, reason: "both Content-Length and Transfer-Encoding" };
  let framing: RequestHead["framing"] = { kind: "none" };
  if (lengths.length > 0) {
    if (!lengths.every((l) => /^\d{1,15}$/.test(l))) return { ok: false, reason: "a malformed Content-Length" };
    if (new Set(lengths.map(Number)).size > 1) return { ok: false, reason: "conflicting Content-Length values" };
    framing = { kind: "length", length: Number(lengths[0]) };
  } else if (encodings.length > 0) {
    if (encodings.length > 1 || encodings[0]?.toLowerCase() !== "chunked") {
      return { ok: false, reason: "a Transfer-Encoding other than a single chunked" };
    }
    if (version === "1.0") return { ok: false, reason: "Transfer-Encoding in an HTTP/1.0 request" };
    framing = { kind: "chunked" };
  }

  const hostHeader = hosts[0];
  if (method === "CONNECT") {
    const authority = parseAuthority(target, undefined);
    if (!authority) return { ok: false, reason: "CONNECT needs an authority-form target host:port" };
    if (framing.kind !== "none") return { ok: false, reason: "a CONNECT request with a body" };
    if (hostHeader !== undefined) {
      const h = parseAuthority(hostHeader, authority.port);
      if (!h || h.host !== authority.host || h.port !== authority.port) {
        return { ok: false, reason: "the Host header disagrees with the CONNECT authority" };
      }
    }
    return { ok: true, head: { method, target, version: version as "1.0" | "1.1", headers, ...authority, path: "", framing } };
  }
  if (target.startsWith("/")) return { ok: false, reason: "an origin-form target: send absolute-form (http://host/path) to a proxy" };
  if (/^https:/i.test(target)) return { ok: false, reason: "an https:// target: use CONNECT for https" };
  const absolute = /^http:\/\/([^/?#]*)([^#]*)$/i.exec(target);
  if (!absolute) return { ok: false, reason: "the target is not an absolute http:// URL" };
  const authority = parseAuthority(absolute[1] ?? "", 80);
  if (!authority) return { ok: false, reason: "a malformed authority in the target" };
  if (hostHeader !== undefined) {
    const h = parseAuthority(hostHeader, 80);
    if (!h) return { ok: false, reason: "a malformed Host header" };
    if (h.host !== authority.host || h.port !== authority.port) return { ok: false, reason: "the Host header disagrees with the target" };
  }
  const rest = absolute[2] ?? "";
  const path = rest === "" ? "/" : rest.startsWith("?") ? `/${rest}` : rest;
  if (!path.startsWith("/")) return { ok: false, reason: "a malformed path in the target" };
  return { ok: true, head: { method, target, version: version as "1.0" | "1.1", headers, ...authority, path, framing } };
}

/** Hop-by-hop headers (RFC 9110 7.6.1) and proxy credentials: never forwarded. */
const HOP_BY_HOP = new Set([
  "connection",
  "proxy-connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "upgrade",
]);

/** The head sent upstream: origin-form, end-to-end headers only, and one request per connection. */
export function forwardedHead(head: RequestHead): Buffer {
  const named = new Set(
    head.headers.filter(([k]) => k.toLowerCase() === "connection").flatMap(([, v]) => v.split(",").map((s) => s.trim().toLowerCase())),
  );
  const kept = head.headers.filter(([k]) => !HOP_BY_HOP.has(k.toLowerCase()) && !named.has(k.toLowerCase()));
  const lines = [`${head.method} ${head.path} HTTP/1.1`, ...kept.map(([k, v]) => `${k}: ${v}`), "Connection: close", "", ""];
  return Buffer.from(lines.join("\r\n"), "latin1");
}

/**
 * Tracks the end of a chunked body in the bytes that pass through, strictly: chunk sizes in hex (with optional
 * extensions), CRLF after each chunk's data, and a trailer section ending with an empty line.
 */
export class ChunkedBodyEnd {
  private state: "size" | "data" | "data-crlf" | "trailer" = "size";
  private line = "";
  private remaining = 0;
  done = false;

  /** How many bytes of `chunk` belong to the body; `done` is set once the body is complete. Throws on bad framing. */
  consume(chunk: Buffer): number {
    let i = 0;
    while (i < chunk.length && !this.done) {
      if (this.state === "data") {
        const take = Math.min(this.remaining, chunk.length - i);
        i += take;
        this.remaining -= take;
        if (this.remaining === 0) this.state = "data-crlf";
        continue;
      }
      const byte = chunk[i] as number;
      i++;
      this.line += String.fromCharCode(byte);
      if (this.line.length > 1024) throw new Error("a chunk-size or trailer line longer than 1024 bytes");
      if (!this.line.endsWith("\r\n")) {
        if (this.line.includes("\n") || (this.line.includes("\r") && !this.line.endsWith("\r")))
          throw new Error("a bare CR or LF in chunked framing");
        continue;
      }
      const line = this.line.slice(0, -2);
      this.line = "";
      if (this.state === "data-crlf") {
        if (line !== "") throw new Error("chunk data not followed by CRLF");
        this.state = "size";
      } else if (this.state === "size") {
        const m = /^([0-9a-fA-F]{1,8})(;[!#$%&'*+\-.^_`|~0-9A-Za-z=;" ]*)?$/.exec(line);
        if (!m) throw new Error("a malformed chunk size");
        this.remaining = Number.parseInt(m[1] as string, 16);
        this.state = this.remaining === 0 ? "trailer" : "data";
      } else if (line === "") {
        this.done = true;
      } else if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+:/.test(line)) {
        throw new Error("a malformed trailer line");
      }
    }
    return i;
  }
}
