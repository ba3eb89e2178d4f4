export const REDACTED = "[REDACTED]";

// The one redactor of Antler: run records, logs, error messages and memory all go through it, so a secret shape
// caught in one place is caught in all. Keys are split into segments on _ - . and camelCase. A strong word marks a
// secret wherever it stands (`password_confirmation`, `client_secret`); a weak word only as the last segment, where
// it names what the value is (`api_key`, `access_token`, `card_pin`), so `token_usage`, `key_id` and `max_tokens`
// stay visible. Container suffixes are dropped first: `apiKeyObj`, `private_key_pem` and `token_value` are secrets.
const words = (list: string) => new Set(list.split(" "));
const STRONG_SEGMENTS = words(
  "apikey secret secrets password passwd passphrase passcode credential credentials authorization cookie privatekey",
);
const WEAK_LAST_SEGMENTS = words("key token pwd pass dsn auth private jwt pin otp cvv cvc");
const CONTAINER_SUFFIXES = words(
  "obj object pem der value val str string b64 base64 hex raw bytes data json text enc encoded plain bin buf buffer",
);
// Two segments that name a secret only together, wherever they stand.
const SECRET_KEY_PAIRS =
  "database_url db_url connection_string postgres_url redis_url api_keys access_tokens refresh_tokens pin_code otp_code";

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
  while (segments.length > 1 && CONTAINER_SUFFIXES.has(segments.at(-1) as string)) segments.pop();
  if (WEAK_LAST_SEGMENTS.has(segments.at(-1) ?? "")) return true;
  const joined = `_${segments.join("_")}_`;
  return SECRET_KEY_PAIRS.split(" ").some((pair) => joined.includes(`_${pair}_`));
}

// Quantifiers are bounded: unbounded, a long run of letters without "://" costs quadratic time.
const URL_CREDENTIALS = /([a-z][a-z0-9+.-]{0,31}:\/\/)([^/\s:@]{0,256}):([^@\s/]{1,256})@/gi;
const BEARER = /\b(Bearer)\s+[A-Za-z0-9._~+/=-]{8,}/gi;
const BASIC = /\b(Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g;
// A JWS/JWE compact token: a base64url JSON header ("eyJ") and at least one more dot-separated part.
const JWT = /\beyJ[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]*){1,4}/g;
// A private key block, whole; one cut off before its END line loses the base64 body that follows its header.
const PEM =
  /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,10}-----(?:[\s\S]{0,20000}?-----END [A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,10}-----|[A-Za-z0-9+/=\s:,-]{0,20000})/g;
const KNOWN_TOKEN =
  /\b(sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|tvly-[A-Za-z0-9_-]{16,}|fc-[A-Za-z0-9]{16,}|e2b_[A-Za-z0-9]{16,}|AIza[0-9A-Za-z_-]{30,45}|[rs]k_(?:live|test)_[0-9A-Za-z]{16,100}|npm_[A-Za-z0-9]{30,40}|pypi-[A-Za-z0-9_-]{30,200}|glpat-[A-Za-z0-9_-]{20,40})\b|\bhttps:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]{10,200}/g;
// `name=value`, `name = "value"`, `"name": value` under any secret name (`aws_secret_access_key=`, `"api_token": 9`).
// A bare `name: value` is as often prose or a config path in a message ("Invalid token: expired"), so it counts only
// for a name of 2+ parts written as an env var or header (`AWS_SECRET_KEY: x`, `x-api-key: x`), or in prose mode.
// The lookahead skips names holding none of the secret words, so text full of `a:` or `x=` costs no match objects.
const ASSIGNMENT =
  /(?<![A-Za-z0-9_.-])(?=[A-Za-z0-9_.-]{0,60}?(?:key|token|secret|pass|pwd|auth|cookie|credential|dsn|jwt|pin|otp|cvv|cvc|private|url|string))([A-Za-z][A-Za-z0-9_.-]{0,63})(\s*=\s*|["']\s*:\s*|:\s*)/gi;
// The value after a secret name: quoted (spaces and all), or up to a separator; base64 padding stays with it.
const ASSIGNED_VALUE = /(["'`])[^"'`\n]{1,1024}\1|(?!\[REDACTED\]|(?:bearer|basic)\b)[^\s"'`&;,}=]{1,1024}={0,2}/iy;
// Secrets stated in prose ("my password is hunter2", "API key: abc123"), for text people write to an assistant.
const PROSE =
  /\b(password|passphrase|passcode|pin|pin code|otp|api[ _-]?key|secret key|access key|auth token|access token|token)(\s+(?:is|was|=|:|-)\s*|\s*[:=]\s*)(["'`]?)([^\s"'`,;]{4,256})\3/gi;

function redactAssignments(text: string, prose: boolean): string {
  let out = "";
  let at = 0;
  for (const m of text.matchAll(ASSIGNMENT)) {
    const [head, key = "", between = ""] = m;
    if (m.index < at || !isSecretKey(key)) continue;
    const bare = !/[="']/.test(between);
    if (bare && (keySegments(key).length < 2 || !(prose || /^[A-Z0-9_]+$|-/.test(key)))) continue;
    ASSIGNED_VALUE.lastIndex = m.index + head.length;
    const value = ASSIGNED_VALUE.exec(text);
    if (!value) continue;
    const quote = value[1] ?? "";
    out += `${text.slice(at, ASSIGNED_VALUE.lastIndex - value[0].length)}${quote}${REDACTED}${quote}`;
    at = ASSIGNED_VALUE.lastIndex;
  }
  return out + text.slice(at);
}

/**
 * Scrubs secrets that hide inside free text: URL credentials, bearer and basic headers, JWTs, private key blocks,
 * well-known token shapes and `name=value` under a secret-looking name. `prose: true` also scrubs secrets stated in
 * words ("my password is ..."): memory facts and run inputs, not error messages, where it would eat plain words.
 */
export function redactText(text: string, options: { prose?: boolean } = {}): string {
  const scrubbed = text
    .replace(PEM, REDACTED)
    .replace(URL_CREDENTIALS, (_m, scheme: string, user: string) => `${scheme}${user}:${REDACTED}@`)
    .replace(BEARER, (_m, kind: string) => `${kind} ${REDACTED}`)
    .replace(BASIC, (_m, kind: string) => `${kind} ${REDACTED}`)
    .replace(JWT, REDACTED)
    .replace(KNOWN_TOKEN, REDACTED);
  const out = redactAssignments(scrubbed, options.prose === true);
  if (!options.prose) return out;
  return out.replace(PROSE, (_m, key: string, between: string, quote: string) => `${key}${between}${quote}${REDACTED}${quote}`);
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
export function redactSecrets<T>(value: T, options: { prose?: boolean } = {}): T {
  return redact(value, 0, { ancestors: new Set(), done: new WeakMap(), prose: options.prose === true }) as T;
}

/** One walk's state: the objects on the current path (cycles), the copies already made (shared objects). */
type Walk = { ancestors: Set<object>; done: WeakMap<object, unknown>; prose: boolean };

function hasSecretValue(value: unknown): boolean {
  return value !== null && value !== undefined && value !== "" && typeof value !== "boolean";
}

function redact(value: unknown, depth: number, walk: Walk): unknown {
  const { ancestors, done } = walk;
  if (typeof value === "string") return redactText(value, walk);
  if (value === null || typeof value !== "object") return value;
  if (ancestors.has(value)) return CIRCULAR;
  // A shared (non-cyclic) object is redacted once and its copy reused.
  if (done.has(value)) return done.get(value);
  if (depth >= MAX_REDACT_DEPTH) return TRUNCATED;
  if (value instanceof Date) return new Date(value.getTime());
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return value;
  ancestors.add(value);
  try {
    const out = copyRedacted(value, depth, walk);
    done.set(value, out);
    return out;
  } finally {
    ancestors.delete(value);
  }
}

function copyRedacted(value: object, depth: number, walk: Walk): unknown {
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1, walk));
  let source: Record<string, unknown>;
  if (value instanceof Error) {
    source = { type: value.constructor?.name ?? value.name, message: value.message, stack: value.stack };
    for (const [k, v] of Object.entries(value)) source[k] = v;
    // AggregateError keeps its inner errors in an own, non-enumerable property.
    if (value instanceof AggregateError) source.errors = value.errors;
    if (value.cause !== undefined) source.cause = value.cause;
  } else if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
    const json = (value as { toJSON(): unknown }).toJSON();
    if (json === null || typeof json !== "object" || json === value || Array.isArray(json)) return redact(json, depth + 1, walk);
    source = json as Record<string, unknown>;
  } else {
    source = value as Record<string, unknown>;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(source)) {
    out[k] = isSecretKey(k) && hasSecretValue(v) ? REDACTED : redact(v, depth + 1, walk);
  }
  return out;
}
