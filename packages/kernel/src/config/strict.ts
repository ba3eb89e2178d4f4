import type { z } from "zod";
import { type AnySchema, defOf, type PathSegment, unwrap } from "./introspect.js";
import { didYouMean } from "./suggest.js";

export interface UnknownKey {
  segments: PathSegment[];
  key: string;
  known: string[];
  suggestion: string | undefined;
}

/**
 * zod's default object mode silently strips unknown keys. Plugin schemas are written with plain `z.object`,
 * so the kernel walks the parsed input against the schema and reports keys that would be dropped, unless
 * the schema opted in to extra keys (`.loose()`, `.catchall()`).
 */
export function findUnknownKeys(schema: AnySchema, data: unknown, path: PathSegment[] = []): UnknownKey[] {
  const s = unwrap(schema);
  const def = defOf(s);
  const out: UnknownKey[] = [];
  if (def.type === "object" && def.shape && isPlainObject(data)) {
    const known = Object.keys(def.shape);
    if (def.catchall === undefined) {
      for (const key of Object.keys(data)) {
        if (!(key in def.shape)) out.push({ segments: path, key, known, suggestion: didYouMean(key, known) });
      }
    }
    for (const [key, child] of Object.entries(def.shape)) if (key in data) out.push(...findUnknownKeys(child, data[key], [...path, key]));
  } else if (def.type === "array" && def.element && Array.isArray(data)) {
    for (const [i, item] of data.entries()) out.push(...findUnknownKeys(def.element as AnySchema, item, [...path, i]));
  } else if (def.type === "record" && def.valueType && isPlainObject(data)) {
    for (const [key, value] of Object.entries(data)) out.push(...findUnknownKeys(def.valueType, value, [...path, key]));
  } else if (def.type === "union" && def.options) {
    const match = def.options.find((o) => (o as unknown as z.ZodType).safeParse(data).success);
    if (match) out.push(...findUnknownKeys(match, data, path));
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
