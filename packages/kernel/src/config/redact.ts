export const REDACTED = "[REDACTED]";

// Key segments that mark a value as a secret. Keys are split on _ - . and camelCase, so `max_tokens` (segment
// "tokens") stays visible while `api_key`, `accessToken` and `DATABASE_URL` do not.
const SECRET_SEGMENTS = new Set([
  "key",
  "apikey",
  "token",
  "secret",
  "password",
  "passwd",
  "pwd",
  "pass",
  "passphrase",
  "credential",
  "credentials",
  "dsn",
  "authorization",
  "auth",
  "cookie",
  "private",
]);
const SECRET_KEY_PAIRS = [
  ["database", "url"],
  ["db", "url"],
  ["connection", "string"],
  ["postgres", "url"],
  ["redis", "url"],
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
  if (segments.some((s) => SECRET_SEGMENTS.has(s))) return true;
  const joined = segments.join("_");
  return SECRET_KEY_PAIRS.some((pair) => joined.includes(pair.join("_")));
}

const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/)([^/\s:@]*):([^@\s/]+)@/gi;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g;
const KNOWN_TOKEN =
  /\b(sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|tvly-[A-Za-z0-9_-]{16,}|fc-[A-Za-z0-9]{16,}|e2b_[A-Za-z0-9]{16,})\b/g;
const INLINE_ASSIGNMENT = /\b(password|passwd|pwd|secret|token|api[_-]?key)=([^\s&;]+)/gi;

/** Scrubs secrets that hide inside free text: URL credentials, bearer headers, well-known token shapes. */
export function redactText(text: string): string {
  return text
    .replace(URL_CREDENTIALS, (_m, scheme: string, user: string) => `${scheme}${user}:${REDACTED}@`)
    .replace(BEARER, (_m, kind: string) => `${kind} ${REDACTED}`)
    .replace(KNOWN_TOKEN, REDACTED)
    .replace(INLINE_ASSIGNMENT, (_m, key: string) => `${key}=${REDACTED}`);
}

/**
 * A deep copy of `value` with secrets scrubbed: values under secret-looking keys are replaced, and strings
 * anywhere are scanned for embedded credentials. Use it on everything that is persisted or echoed back.
 */
export function redactSecrets<T>(value: T): T {
  return redact(value, new WeakMap()) as T;
}

function redact(value: unknown, seen: WeakMap<object, unknown>): unknown {
  if (typeof value === "string") return redactText(value);
  if (value === null || typeof value !== "object") return value;
  if (seen.has(value)) return seen.get(value);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const item of value) out.push(redact(item, seen));
    return out;
  }
  if (value instanceof Date) return new Date(value.getTime());
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const [k, v] of Object.entries(value)) {
    if (isSecretKey(k) && v !== null && v !== undefined && v !== "" && (typeof v === "string" || typeof v === "number")) {
      out[k] = REDACTED;
    } else {
      out[k] = redact(v, seen);
    }
  }
  return out;
}
