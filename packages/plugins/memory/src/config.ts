import { z } from "zod";

/** How memory reaches the model: automatically (extraction after turns, injection before model calls) or through tools. */
export const MEMORY_MODES = ["middleware", "tool"] as const;
export type MemoryMode = (typeof MEMORY_MODES)[number];

/** The `memory:` section of config.yaml, owned by `@antler/plugin-memory` and validated strictly while it is loaded. */
export const memorySectionSchema = z.strictObject({
  enabled: z.boolean().default(true).describe("Switch memory off without unloading the plugin (routes and CLI still work)."),
  mode: z
    .enum(MEMORY_MODES, { error: 'memory.mode must be "middleware" (automatic extraction and injection) or "tool" (memory_* tools)' })
    .default("middleware")
    .describe("middleware: extract facts after turns and inject relevant memory; tool: memory_search/add/update/delete tools instead."),
  model: z.string().min(1).optional().describe("The `models:` entry that extracts facts; default the default model."),
  debounce_ms: z
    .number()
    .int()
    .min(0)
    .max(3_600_000)
    .default(30_000)
    .describe("Quiet time after a turn before its thread is extracted; quick successive turns share one extraction."),
  injection_enabled: z.boolean().default(true).describe("middleware mode: add the relevant memory to each turn's model calls."),
  injection_recheck_ms: z
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(1000)
    .describe(
      "middleware mode: how long a turn's lookup may trust the last check that memory is unchanged. This process's writes show at once, other instances' within this time; 0 checks the database before every turn.",
    ),
  max_injection_tokens: z
    .number()
    .int()
    .min(50)
    .max(100_000)
    .default(2000)
    .describe("Budget of the injected memory block (about 4 characters per token)."),
  max_injected_facts: z.number().int().min(0).max(200).default(15).describe("At most this many facts, most relevant first."),
  max_facts: z
    .number()
    .int()
    .positive()
    .max(1_000_000)
    .default(1000)
    .describe("Facts kept per user and agent; past it, extraction and memory_add evict the least confident, oldest facts."),
  fact_confidence_threshold: z.number().min(0).max(1).default(0.7).describe("Extracted facts below this confidence are not stored."),
  max_extraction_messages: z
    .number()
    .int()
    .positive()
    .max(500)
    .default(20)
    .describe("How many of a thread's newest user/assistant messages one extraction reads."),
  shutdown_flush_timeout_ms: z
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(30_000)
    .describe("On kernel close, how long pending and running extractions may take before they are given up (and logged)."),
});

export type MemoryConfig = z.output<typeof memorySectionSchema>;
export type MemoryConfigInput = z.input<typeof memorySectionSchema>;

/** The top-level config.yaml sections this plugin owns. */
export const memoryConfigSections = { memory: memorySectionSchema.default(memorySectionSchema.parse({})) };

/** Fact categories (DeerFlow's): what kind of thing the fact says about the user. */
export const FACT_CATEGORIES = ["preference", "knowledge", "context", "behavior", "goal"] as const;
export type FactCategory = (typeof FACT_CATEGORIES)[number];
