export const REDACTED = "[REDACTED]";

// Keys are split into segments on _ - . and camelCase. A strong word marks a secret wherever it stands
// (`password_confirmation`, `client_secret`); a weak word only as the last segment, where it names what the value
// is (`api_key`, `access_token`, `x-api-key`), so `token_usage`, `token_count`, `key_id` and `max_tokens` stay visible.
const STRONG_SEGMENTS = new Set([
  "apikey",
  "secret",
  "secrets",
  "password",
  "passwd",
  "passphrase",
  "credential",
  "credentials",
  "authorization",
  "cookie",
]);
const WEAK_LAST_SEGMENTS = new Set(["key", "token", "pwd", "pass", "dsn", "auth", "private", "jwt"]);
const SECRET_KEY_PAIRS = [
  ["database", "url"],
  ["db", "url"],
  ["connection", "string"],
  ["postgres", "url"],
  ["redis", "url"],
  ["api", "keys"],
  ["access", "tokens"],
  ["refresh", "tokens"],
];

function keySegments(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

export function isSecretKey(key: string): boolean {
  const segments = keySegments(key);
  if (segments.some((s) => STRONG_SEGMENTS.has(s))) return true;
  const last = segments.at(-1);
  if (last !== undefined && WEAK_LAST_SEGMENTS.has(last)) return true;
  const joined = `_${segments.join("_")}_`;
  return SECRET_KEY_PAIRS.some((pair) => joined.includes(`_${pair.join("_")}_`));
}

// Quantifiers are bounded: with an unbounded scheme, a long run of letters without "://" costs quadratic time,
// and run records redact whole messages.
const URL_CREDENTIALS = /([a-z][a-z0-9+.-]{0,31}:\/\/)([^/\s:@]{0,256}):([^@\s/]{1,256})@/gi;
const BEARER = /\b(Bearer)\s+[A-Za-z0-9._~+/=-]{8,}/gi;
const BASIC = /\b(Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g;
// A JWS/JWE compact token: a base64url JSON header ("eyJ") and at least one more dot-separated part.
const JWT = /\beyJ[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]*){1,4}/g;
const KNOWN_TOKEN =
  /\b(sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|tvly-[A-Za-z0-9_-]{16,}|fc-[A-Za-z0-9]{16,}|e2b_[A-Za-z0-9]{16,})\b/g;
// `password=x` in a query string or a log line, and `"client_secret": "x"` in JSON that travels as text.
const INLINE_ASSIGNMENT =
  /\b(password|passwd|pwd|secret|client[_-]?secret|token|access[_-]?token|refresh[_-]?token|id[_-]?token|api[_-]?key)(=|["']\s*:\s*["']?)([^\s"'&;,}]+)/gi;

/** Scrubs secrets that hide inside free text: URL credentials, bearer headers, JWTs, well-known token shapes. */
export function redactText(text: string): string {
  return text
    .replace(URL_CREDENTIALS, (_m, scheme: string, user: string) => `${scheme}${user}:${REDACTED}@`)
    .replace(BEARER, (_m, kind: string) => `${kind} ${REDACTED}`)
    .replace(BASIC, (_m, kind: string) => `${kind} ${REDACTED}`)
    .replace(JWT, REDACTED)
    .replace(KNOWN_TOKEN, REDACTED)
    .replace(INLINE_ASSIGNMENT, (_m, key: string, between: string) => `${key}${between}${REDACTED}`);
}

/** How deep `redactSecrets` looks; anything deeper is replaced, never copied unscanned. */
export const MAX_REDACT_DEPTH = 64;
const CIRCULAR = "[Circular]";
const TRUNCATED = "[Truncated]";

/**
 * A deep copy of `value` with secrets scrubbed: values of any shape under secret-looking keys are replaced, and
 * strings anywhere are scanned for embedded credentials. Cycles become "[Circular]" and anything nested deeper
 * than MAX_REDACT_DEPTH becomes "[Truncated]". Errors become `{ type, message, stack, ...own fields }`; objects
 * with `toJSON` are redacted in their serialised shape. Use it on everything persisted, logged or echoed back.
 */
export function redactSecrets<T>(value: T): T {
  return redact(value, 0, new Set(), new WeakMap()) as T;
}

function hasSecretValue(value: unknown): boolean {
  return value !== null && value !== undefined && value !== "" && typeof value !== "boolean";
}

function redact(value: unknown, depth: number, ancestors: Set<object>, done: WeakMap<object, unknown>): unknown {
  if (typeof value === "string") return redactText(value);
  if (value === null || typeof value !== "object") return value;
  if (ancestors.has(value)) return CIRCULAR;
  // A shared (non-cyclic) object is redacted once and its copy reused.
  if (done.has(value)) return done.get(value);
  if (depth >= MAX_REDACT_DEPTH) return TRUNCATED;
  if (value instanceof Date) return new Date(value.getTime());
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return value;
  ancestors.add(value);
  try {
    const out = copyRedacted(value, depth, ancestors, done);
    done.set(value, out);
    return out;
  } finally {
    ancestors.delete(value);
  }
}

function copyRedacted(value: object, depth: number, ancestors: Set<object>, done: WeakMap<object, unknown>): unknown {
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1, ancestors, done));
  let source: Record<string, unknown>;
  if (value instanceof Error) {
    source = { type: value.constructor?.name ?? value.name, message: value.message, stack: value.stack };
    for (const [k, v] of Object.entries(value)) source[k] = v;
    // AggregateError keeps its inner errors in an own, non-enumerable property.
    if (value instanceof AggregateError) source.errors = value.errors;
    if (value.cause !== undefined) source.cause = value.cause;
  } else if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
    const json = (value as { toJSON(): unknown }).toJSON();
    if (json === null || typeof json !== "object" || json === value || Array.isArray(json)) return redact(json, depth + 1, ancestors, done);
    source = json as Record<string, unknown>;
  } else {
    source = value as Record<string, unknown>;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(source)) {
    out[k] = isSecretKey(k) && hasSecretValue(v) ? REDACTED : redact(v, depth + 1, ancestors, done);
  }
  return out;
}
