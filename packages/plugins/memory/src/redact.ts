import { REDACTED, redactText } from "@antler/kernel";

// What the kernel's redactText does not catch but people do say to an assistant. Quantifiers are bounded so a
// long message costs linear time.
const EXTRA_PATTERNS: ReadonlyArray<[RegExp, (match: string, ...groups: string[]) => string]> = [
  // PEM private keys, whole block.
  [/-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[\s\S]{0,10000}?-----END [A-Z ]{0,40}PRIVATE KEY-----/g, () => REDACTED],
  // AWS secret access keys written as an assignment (the access key id AKIA... is the kernel's).
  [/\b(aws[_-]?secret[_-]?access[_-]?key)(\s*[:=]\s*["']?)[A-Za-z0-9/+=]{20,80}/gi, (_m, key, between) => `${key}${between}${REDACTED}`],
  // Google API keys, Stripe live/test keys, Slack webhooks, npm and PyPI tokens, GitLab personal tokens.
  [/\bAIza[0-9A-Za-z_-]{30,45}\b/g, () => REDACTED],
  [/\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,100}\b/g, () => REDACTED],
  [/\bhttps:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]{10,200}/g, () => REDACTED],
  [/\bnpm_[A-Za-z0-9]{30,40}\b/g, () => REDACTED],
  [/\bpypi-[A-Za-z0-9_-]{30,200}\b/g, () => REDACTED],
  [/\bglpat-[A-Za-z0-9_-]{20,40}\b/g, () => REDACTED],
  // "my password is hunter2", "API key: abc123...", "token - xyz" in prose.
  [
    /\b(password|passphrase|passcode|pin code|api[ _-]?key|secret key|access key|auth token|access token|token)(\s+(?:is|was|=|:|-)\s*|\s*[:=]\s*)(["'`]?)([^\s"'`,;]{4,256})\3/gi,
    (_m, key, between, quote) => `${key}${between}${quote}${REDACTED}${quote}`,
  ],
];

/**
 * Scrubs credentials from text before it becomes a memory fact or profile field: URL credentials, bearer and
 * basic headers, JWTs, well-known token shapes (`sk-…`, `ghp_…`, `AKIA…`, …) and `password=…` (the kernel's
 * `redactText`), plus private keys, AWS secret keys, more vendor token shapes and secrets stated in prose.
 */
export function redactMemoryText(text: string): string {
  let out = redactText(text);
  for (const [pattern, replace] of EXTRA_PATTERNS) out = out.replace(pattern, replace as (m: string, ...g: string[]) => string);
  return out;
}

export { REDACTED };
