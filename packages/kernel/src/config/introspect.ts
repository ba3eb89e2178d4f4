import type { z } from "zod";

/** Read-only helpers that look inside zod 4 schemas, for config diagnostics (known keys, strictness). */
export type AnySchema = z.core.$ZodType;

import type { PathSegment } from "./format.js";

export type { PathSegment };

export interface SchemaDef {
  type: string;
  innerType?: AnySchema;
  in?: AnySchema;
  element?: AnySchema;
  valueType?: AnySchema;
  options?: AnySchema[];
  shape?: Record<string, AnySchema>;
  catchall?: AnySchema;
  getter?: () => AnySchema;
}

export const defOf = (s: AnySchema): SchemaDef => (s as unknown as { _zod: { def: SchemaDef } })._zod.def;

/** Strips optional/default/nullable/pipe/lazy wrappers down to the schema that describes the value. */
export function unwrap(schema: AnySchema): AnySchema {
  let current = schema;
  for (let i = 0; i < 20; i++) {
    const def = defOf(current);
    const inner = def.innerType ?? (def.type === "pipe" ? def.in : undefined) ?? (def.type === "lazy" ? def.getter?.() : undefined);
    if (!inner) return current;
    current = inner;
  }
  return current;
}

export function expandUnion(schema: AnySchema): AnySchema[] {
  const def = defOf(schema);
  if (def.type === "union" && def.options) return def.options.flatMap((o) => expandUnion(unwrap(o)));
  return [schema];
}

function childSchemas(schema: AnySchema, seg: PathSegment): AnySchema[] {
  const out: AnySchema[] = [];
  for (const option of expandUnion(schema)) {
    const def = defOf(option);
    if (def.type === "object" && def.shape && typeof seg === "string" && def.shape[seg]) out.push(def.shape[seg]);
    else if (def.type === "array" && def.element && typeof seg === "number") out.push(def.element);
    else if (def.type === "record" && def.valueType) out.push(def.valueType);
  }
  return out;
}

/** The keys an object schema allows at `path`, or [] when the schema there is not an object. */
export function objectKeysAt(schema: AnySchema, path: readonly PathSegment[]): string[] {
  let candidates: AnySchema[] = [schema];
  for (const seg of path) candidates = candidates.flatMap((c) => childSchemas(unwrap(c), seg));
  const keys = new Set<string>();
  for (const c of candidates) {
    for (const option of expandUnion(unwrap(c))) {
      const shape = defOf(option).shape;
      if (shape) for (const k of Object.keys(shape)) keys.add(k);
    }
  }
  return [...keys];
}
