/** Stable codes of the errors this package raises. */
export const BrowserErrorCodes = {
  /** The Chromium binary is missing or failed to start. */
  UNAVAILABLE: "ANTLER_ERR_BROWSER_UNAVAILABLE",
  /** `max_sessions` is reached and every session is pinned. */
  SESSION_LIMIT: "ANTLER_ERR_BROWSER_SESSION_LIMIT",
  /** A `[ref]` that is not on the current page. */
  STALE_REF: "ANTLER_ERR_BROWSER_STALE_REF",
  /** The SSRF guard refused a URL. */
  BLOCKED_URL: "ANTLER_ERR_BROWSER_BLOCKED_URL",
  /** CDP attach without `allow_unguarded_cdp`, or another unsafe setup. */
  UNSAFE_CONFIG: "ANTLER_ERR_BROWSER_UNSAFE_CONFIG",
  /** The remote browser service has no token, or refused the one it was given. */
  REMOTE_AUTH: "ANTLER_ERR_BROWSER_REMOTE_AUTH",
  /** The manager (or its kernel) is closed. */
  CLOSED: "ANTLER_ERR_BROWSER_CLOSED",
} as const;

export type BrowserErrorCode = (typeof BrowserErrorCodes)[keyof typeof BrowserErrorCodes];

/** An expected browser failure. Its message is written for the model: what went wrong and what to do next. */
export class BrowserError extends Error {
  override readonly name = "BrowserError";
  constructor(
    readonly code: BrowserErrorCode,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
}

export function isBrowserError(value: unknown, code?: BrowserErrorCode): value is BrowserError {
  return value instanceof BrowserError && (code === undefined || value.code === code);
}
