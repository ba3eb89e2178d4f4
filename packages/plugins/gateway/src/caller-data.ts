import { z } from "zod";

// Caller-data limits without the gateway's run schemas (which load @antler/plugin-runtime), so a plugin's light
// entry can hold its own HTTP bodies to the same limits: `@antler/plugin-gateway/caller-data`.

/**
 * Bounds on caller-owned free-form data: run `metadata` and `context` (also under `config`, and again once
 * merged), and thread metadata. A run copies these into LangChain callback metadata (per key, for every
 * child run), redacts every string in them and stores them, so the work grows with their size; the limits
 * keep the largest accepted body cheap. The small string and byte limits also keep the kernel's secret
 * redaction, whose URL pattern is quadratic in long runs of letters, well under a millisecond per run.
 */
export const CALLER_DATA_LIMITS = Object.freeze({
  /** Keys of the top-level object (each becomes a callback-metadata key of every step of the run). */
  max_keys: 32,
  /** Object keys and array items, counted at every level. */
  max_entries: 256,
  /** Levels of objects and arrays, the top-level object included (`{ a: { b: 1 } }` is 2 levels). */
  max_depth: 8,
  /** Characters of one key. */
  max_key_length: 128,
  /** Characters of one string value. */
  max_string_length: 512,
  /** Bytes of the object written as JSON. */
  max_bytes: 16 * 1024,
});

export interface LimitViolation {
  /** The limit's name, as in CALLER_DATA_LIMITS (or `max_json_depth`). */
  limit: string;
  max: number;
  /** Dotted path of the value that passed it. */
  path: string;
  message: string;
}

const isContainer = (value: unknown): value is Record<string, unknown> | unknown[] => typeof value === "object" && value !== null;

/** The first limit of CALLER_DATA_LIMITS that `value` (a caller's object) passes, or `null`. */
export function findCallerDataViolation(field: string, value: Record<string, unknown>): LimitViolation | null {
  const limits = CALLER_DATA_LIMITS;
  const keys = Object.keys(value).length;
  if (keys > limits.max_keys) {
    return {
      limit: "max_keys",
      max: limits.max_keys,
      path: field,
      message: `${field} has ${keys} keys, over the limit of ${limits.max_keys}`,
    };
  }
  let entries = 0;
  const stack: Array<{ value: unknown; depth: number; path: string }> = [{ value, depth: 0, path: field }];
  while (stack.length > 0) {
    const item = stack.pop() as { value: unknown; depth: number; path: string };
    if (typeof item.value === "string" && item.value.length > limits.max_string_length) {
      return {
        limit: "max_string_length",
        max: limits.max_string_length,
        path: item.path,
        message: `${item.path} is a string of ${item.value.length} characters, over the limit of ${limits.max_string_length}`,
      };
    }
    if (!isContainer(item.value)) continue;
    if (item.depth >= limits.max_depth) {
      return {
        limit: "max_depth",
        max: limits.max_depth,
        path: item.path,
        message: `${field} nests deeper than ${limits.max_depth} levels (at ${item.path})`,
      };
    }
    for (const [key, child] of Object.entries(item.value)) {
      entries += 1;
      if (entries > limits.max_entries) {
        return {
          limit: "max_entries",
          max: limits.max_entries,
          path: field,
          message: `${field} has more than ${limits.max_entries} keys and array items (counted at every level)`,
        };
      }
      if (!Array.isArray(item.value) && key.length > limits.max_key_length) {
        return {
          limit: "max_key_length",
          max: limits.max_key_length,
          path: item.path,
          message: `${item.path} has a key of ${key.length} characters, over the limit of ${limits.max_key_length}`,
        };
      }
      stack.push({ value: child, depth: item.depth + 1, path: `${item.path}.${key}` });
    }
  }
  // Only reached when every other limit holds, so the object is small enough to write out.
  const bytes = Buffer.byteLength(JSON.stringify(value));
  if (bytes > limits.max_bytes) {
    return {
      limit: "max_bytes",
      max: limits.max_bytes,
      path: field,
      message: `${field} is ${bytes} bytes as JSON, over the limit of ${limits.max_bytes}`,
    };
  }
  return null;
}

/**
 * True for a key that names a trace id in any spelling: `trace_id`, `traceId`, `TRACE_ID`, `X-Trace-Id`,
 * `antler_trace_id`. Case, `-`, `_` and spaces do not matter.
 */
export function isTraceIdKey(key: string): boolean {
  const folded = key.toLowerCase().replace(/[^a-z0-9]/g, "");
  return folded === "traceid" || folded === "xtraceid" || folded === "antlertraceid";
}

/**
 * A copy without trace-id keys at any depth: the server stamps its own id, and a caller-sent one must not
 * reach the run record or the logs under another spelling. Input is already bounded in depth.
 */
export function withoutTraceIdKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => withoutTraceIdKeys(item)) as T;
  if (!isContainer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) if (!isTraceIdKey(key)) out[key] = withoutTraceIdKeys(child);
  return out as T;
}

/**
 * A caller's free-form object bounded by CALLER_DATA_LIMITS: a failure is a zod issue carrying `params.limit` and
 * `params.max`, which the gateway answers with a 400 `ANTLER_ERR_GATEWAY_LIMIT_EXCEEDED` naming the limit.
 */
export function boundedCallerData(field: string) {
  return z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    const violation = findCallerDataViolation(field, value);
    if (violation) {
      ctx.addIssue({ code: "custom", message: violation.message, params: { limit: violation.limit, max: violation.max } });
    }
  });
}

/** `boundedCallerData`, with trace-id keys dropped at every depth (the server stamps its own). */
export function callerDataSchema(field: string) {
  return boundedCallerData(field).transform((value) => withoutTraceIdKeys(value));
}
