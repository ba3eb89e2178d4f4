import type { StateField } from "@antler/kernel";
import { ReducedValue } from "@langchain/langgraph";
import { z } from "zod";

/** Thread state `promoted`: the deferred tools loaded in this thread, valid only for the catalog with this hash. */
export interface Promoted {
  catalog_hash: string;
  names: string[];
}

/**
 * Same catalog: union (first loaded first). Another catalog: the update replaces the record, so promotions made
 * against a catalog that has since changed are dropped. `null` clears; absent keeps.
 */
export function mergePromoted(current: Promoted | undefined, update: Promoted | null | undefined): Promoted | undefined {
  if (update === undefined) return current;
  if (update === null) return undefined;
  const base = current && current.catalog_hash === update.catalog_hash ? current.names : [];
  const names = [...base];
  const seen = new Set(names);
  for (const name of update.names) {
    if (!seen.has(name)) {
      seen.add(name);
      names.push(name);
    }
  }
  return { catalog_hash: update.catalog_hash, names };
}

const promotedSchema = z.object({ catalog_hash: z.string(), names: z.array(z.string()) });

export const promotedField: StateField = new ReducedValue(promotedSchema.optional(), {
  inputSchema: promotedSchema.nullable().optional(),
  reducer: (a: Promoted | undefined, b: Promoted | null | undefined) => mergePromoted(a, b),
}) as StateField;

/** The names loaded for this catalog (none when the record belongs to another catalog). */
export function loadedNames(state: Readonly<Record<string, unknown>>, catalogHash: string): ReadonlySet<string> {
  const record = state.promoted as Promoted | undefined;
  return new Set(record?.catalog_hash === catalogHash ? record.names : []);
}
