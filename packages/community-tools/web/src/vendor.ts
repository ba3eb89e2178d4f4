import { AntlerError, ErrorCodes } from "@antler/kernel";
import { ensureOk } from "./call.js";

/**
 * Small helpers for provider packages that speak a vendor's HTTP API, so every provider reads answers, caps
 * text and builds URLs the same way.
 */

/**
 * Parses a 2xx JSON answer. Non-2xx answers become `WebProviderHttpError` (through `ensureOk`, with
 * Retry-After), so the tool layer handles every vendor alike; a 2xx body that is not JSON is a vendor fault,
 * reported with its first bytes.
 */
export async function readJson(provider: string, response: Response): Promise<unknown> {
  await ensureOk(provider, response);
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${provider} answered HTTP ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
}

/**
 * Cuts `text` to at most `max` characters, marking the cut with "…": on a space when one is within the last
 * fifth, never on half a surrogate pair. For titles and snippets; `truncateText` is the page-sized variant.
 */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, Math.max(0, max - 1));
  const space = cut.lastIndexOf(" ");
  if (space > max * 0.8) cut = cut.slice(0, space);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut.trimEnd()}…`;
}

/** `baseUrl` without trailing slashes, so a configured `base_url` works with or without one. */
export function trimBaseUrl(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, "");
}

/** Joins a base URL and an API path (`endpoint(base_url, "search")`), with or without slashes on either side. */
export function endpoint(baseUrl: string, path: string): string {
  return `${trimBaseUrl(baseUrl)}/${path.replace(/^\/+/, "")}`;
}

/** Whether `value` is an absolute http(s) URL; vendors' results without one are dropped. */
export function isHttpUrl(value: string | undefined): value is string {
  if (!value) return false;
  try {
    const { protocol } = new URL(value);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
}

export interface ApiKeyOptions {
  /** The configured `api_key`, which wins over the environment. */
  readonly configured: string | undefined;
  /** The environment variable read when `api_key` is not configured, e.g. `BRAVE_SEARCH_API_KEY`. */
  readonly envVar: string;
  /** Where `envVar` is looked up. Default `process.env`, read at call time. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** The vendor as named in the message: `no ${vendor} API key: ...`. */
  readonly vendor: string;
  /** The config path named in the error, e.g. `plugins[@antler/tools-brave].config.api_key`. */
  readonly where: string;
  /** Where an operator gets a key, named in the hint. */
  readonly keyPage: string;
}

/**
 * The vendor API key: the configured `api_key`, else `envVar` from the environment. Call it per request (not in
 * `setup`), so a kernel that never uses the provider boots without a key; a missing key is a coded
 * `CONFIG_ENV_MISSING` error naming the env var, the config path and where to get a key.
 */
export function requireApiKey(options: ApiKeyOptions): string {
  const key = options.configured ?? (options.env ?? process.env)[options.envVar];
  if (!key) {
    throw new AntlerError(
      ErrorCodes.CONFIG_ENV_MISSING,
      `no ${options.vendor} API key: ${options.envVar} is not set and api_key is not configured`,
      {
        where: options.where,
        hint: `Export ${options.envVar} (from ${options.keyPage}) or set api_key: \${${options.envVar}}.`,
      },
    );
  }
  return key;
}
