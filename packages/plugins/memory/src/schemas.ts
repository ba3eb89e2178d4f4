import { z } from "zod";
import { FACT_CATEGORIES, MEMORY_MODES } from "./config.js";

/**
 * The one schema source for what memory sends over the gateway and returns from `MemoryClient` in process: the
 * conformance test parses both with these, so a field added to one side and not the other fails.
 */

export const factCategorySchema = z.enum(FACT_CATEGORIES, {
  error: `category must be one of: ${FACT_CATEGORIES.join(", ")}`,
});

export const memoryFactSchema = z.object({
  id: z.string(),
  content: z.string(),
  category: z.string(),
  confidence: z.number().min(0).max(1),
  source: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const memoryProfileSchema = z.object({
  work_context: z.string(),
  personal_context: z.string(),
  top_of_mind: z.string(),
});

export const memoryHistorySchema = z.object({
  recent_months: z.string(),
  earlier_context: z.string(),
  long_term_background: z.string(),
});

/** `GET /api/memory`, `DELETE /api/memory`, `POST /api/memory/import`; `MemoryClient.getMemory()` and friends. */
export const memoryResponseSchema = z.object({
  user_id: z.string(),
  agent_name: z.string().nullable(),
  profile: memoryProfileSchema,
  history: memoryHistorySchema,
  facts: z.array(memoryFactSchema),
  updated_at: z.string().nullable(),
});

export const MEMORY_EXPORT_VERSION = 1;

/** `GET /api/memory/export`, and the body `POST /api/memory/import` takes (strict: a typo is a 400, not data loss). */
export const memoryExportSchema = z.strictObject({
  version: z.literal(MEMORY_EXPORT_VERSION, { error: `version must be ${MEMORY_EXPORT_VERSION} (the format of this Antler's exports)` }),
  exported_at: z.string(),
  user_id: z.string(),
  agent_name: z.string().nullable(),
  profile: z.strictObject({ work_context: z.string(), personal_context: z.string(), top_of_mind: z.string() }),
  history: z.strictObject({ recent_months: z.string(), earlier_context: z.string(), long_term_background: z.string() }),
  facts: z.array(
    z.strictObject({
      id: z.string().min(1).max(200),
      content: z.string().trim().min(1, "a fact's content is empty").max(10_000),
      category: factCategorySchema,
      confidence: z.number().min(0).max(1),
      source: z.string().max(500),
      created_at: z.string().min(1),
      updated_at: z.string().min(1),
    }),
  ),
});

export const memoryImportOptionsSchema = z.strictObject({
  mode: z.enum(["merge", "replace"]).default("merge").describe("merge: add facts with new ids; replace: clear first."),
});

export const factCreateSchema = z.strictObject({
  content: z.string().trim().min(1, "content is empty").max(10_000),
  category: factCategorySchema.default("context"),
  confidence: z.number().min(0).max(1).default(0.7),
});

export const factUpdateSchema = z
  .strictObject({
    content: z.string().trim().min(1, "content is empty").max(10_000).optional(),
    category: factCategorySchema.optional(),
    confidence: z.number().min(0).max(1).optional(),
  })
  .refine((p) => p.content !== undefined || p.category !== undefined || p.confidence !== undefined, {
    message: "give at least one of content, category, confidence",
  });

export const factListResponseSchema = z.object({ facts: z.array(memoryFactSchema) });
export const factSearchResponseSchema = z.object({
  query: z.string(),
  facts: z.array(memoryFactSchema.extend({ score: z.number() })),
});
export const factDeleteResponseSchema = z.object({ id: z.string(), deleted: z.literal(true) });

/** `GET /api/memory/config`: the effective `memory:` section. */
export const memoryConfigResponseSchema = z.object({
  enabled: z.boolean(),
  mode: z.enum(MEMORY_MODES),
  model: z.string().nullable(),
  debounce_ms: z.number(),
  injection_enabled: z.boolean(),
  injection_recheck_ms: z.number(),
  max_injection_tokens: z.number(),
  max_injected_facts: z.number(),
  max_facts: z.number(),
  fact_confidence_threshold: z.number(),
  max_extraction_messages: z.number(),
  storage: z.enum(["sqlite", "postgres"]),
  retrieval: z.enum(["fts5", "tsvector"]),
});

/** `GET /api/memory/status`: the caller's memory and this process's extraction queue. */
export const memoryStatusResponseSchema = z.object({
  enabled: z.boolean(),
  mode: z.enum(MEMORY_MODES),
  user_id: z.string(),
  agent_name: z.string().nullable(),
  fact_count: z.number().int(),
  last_extraction_at: z.string().nullable(),
  /** Threads of this user waiting for their debounced extraction in this process. */
  pending_extractions: z.number().int(),
  /** Extractions of this user running now in this process. */
  running_extractions: z.number().int(),
});

export type MemoryResponse = z.output<typeof memoryResponseSchema>;
export type MemoryExport = z.output<typeof memoryExportSchema>;
export type MemoryExportInput = z.input<typeof memoryExportSchema>;
export type FactCreateInput = z.input<typeof factCreateSchema>;
export type FactUpdateInput = z.input<typeof factUpdateSchema>;
export type MemoryConfigResponse = z.output<typeof memoryConfigResponseSchema>;
export type MemoryStatusResponse = z.output<typeof memoryStatusResponseSchema>;
export type FactSearchResponse = z.output<typeof factSearchResponseSchema>;
