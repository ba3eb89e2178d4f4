import { z } from "zod";

/**
 * The kernel's own sections of config.yaml. Every object is strict: an unknown key is an error with a
 * did-you-mean suggestion, because a misspelt key silently ignored is a deployment bug waiting to happen.
 * Plugin configuration lives under `plugins[i].config` and is validated by each plugin's own schema.
 */
/** The keys of a `models:` entry that its `when_thinking_enabled` / `when_thinking_disabled` blocks may override. */
const modelSettingsSchema = z.strictObject({
  model: z.string().min(1).optional().describe("The provider's model id (e.g. gpt-4o-mini)."),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().positive().optional(),
  timeout_seconds: z.number().positive().optional(),
  reasoning_effort: z
    .enum(["minimal", "low", "medium", "high"])
    .optional()
    .describe("How hard a reasoning model thinks; each provider maps it to its own knob. Needs supports_thinking."),
  options: z.record(z.string(), z.unknown()).optional().describe("Provider-specific options, passed through."),
});
const price = z.number().min(0, "a price cannot be negative");
// Fallbacks, retries, limits and pricing (docs/plugins/models.md "Fallbacks, limits, pricing and budgets"); prices in USD per million tokens.
const modelPricingSchema = z.strictObject({ input: price, output: price, cached_input: price.optional(), reasoning: price.optional() });
const modelRetrySchema = z.strictObject({
  attempts: z.number().int().min(0).default(2),
  backoff_seconds: z.number().min(0).default(1),
  max_wait_seconds: z.number().min(0).default(60),
});
const modelResilienceShape = {
  fallbacks: z.array(z.string().min(1)).optional().describe("Models tried in order when this one fails (429, 5xx, timeout, refusal)."),
  retry: modelRetrySchema.optional(),
  max_concurrency: z.number().int().positive().optional(),
  requests_per_minute: z.number().int().positive().optional(),
  queue_timeout_seconds: z.number().min(0).optional().describe("Longest wait for a concurrency or rate slot; default 60."),
  pricing: modelPricingSchema.optional(),
};
const merged = "its keys replace the entry's, `options` merge key by key (a null value removes one)";

export const modelConfigSchema = z
  .strictObject({
    name: z.string().min(1).describe("Unique id used by agents, `--model` and the API."),
    provider: z.string().min(1).describe("Model provider registered by a plugin: openai, anthropic, cassette, ..."),
    ...modelSettingsSchema.shape,
    display_name: z.string().optional(),
    description: z.string().optional(),
    api_key: z.string().optional(),
    base_url: z.string().url().optional().describe("OpenAI-compatible endpoint (vLLM, Ollama, DeepSeek, ...)."),
    max_retries: z.number().int().min(0).optional(),
    context_window: z.number().int().positive().optional(),
    max_output_tokens: z.number().int().positive().optional().describe("The most tokens the model can write in one answer."),
    supports_vision: z.boolean().default(false),
    supports_tools: z.boolean().default(true).describe("false: the model is never given tools."),
    supports_thinking: z.boolean().default(false).describe("Runs may switch thinking on; without it, thinking is always off."),
    when_thinking_enabled: modelSettingsSchema.optional().describe(`Applied when a run has thinking on: ${merged}.`),
    when_thinking_disabled: modelSettingsSchema.optional().describe(`Applied when a run has thinking off: ${merged}.`),
    ...modelResilienceShape,
  })
  .refine((m) => m.supports_thinking || !m.when_thinking_enabled, {
    path: ["when_thinking_enabled"],
    message: "needs supports_thinking: true (without it thinking is always off, so this block would never apply)",
  })
  .refine((m) => m.supports_thinking || m.reasoning_effort === undefined, {
    path: ["reasoning_effort"],
    message: "needs supports_thinking: true (only a reasoning model has an effort to set)",
  })
  .refine((m) => m.max_output_tokens === undefined || m.max_tokens === undefined || m.max_tokens <= m.max_output_tokens, {
    path: ["max_tokens"],
    message: "is more than max_output_tokens (the most this model can write); lower max_tokens or correct max_output_tokens",
  });

/** Every fallback names another configured model, and no chain of fallbacks comes back to where it began. */
function checkFallbacks(models: ReadonlyArray<{ name: string; fallbacks?: string[] | undefined }>, ctx: z.RefinementCtx): void {
  const index = new Map(models.map((m, i) => [m.name, i]));
  const issue = (i: number, j: number, message: string) =>
    ctx.addIssue({ code: "custom", path: [i, "fallbacks", j], message: `${message}; fix it and run \`antler config check\`` });
  const state = new Map<string, "open" | "done">();
  const visit = (name: string, path: string[]): void => {
    state.set(name, "open");
    const i = index.get(name) as number;
    for (const [j, next] of (models[i]?.fallbacks ?? []).entries()) {
      if (next === name) issue(i, j, "a model cannot fall back to itself");
      else if (!index.has(next)) issue(i, j, `fallback "${next}" is not a configured model (${[...index.keys()].join(", ")})`);
      else if (state.get(next) === "open")
        issue(i, j, `fallbacks form a cycle: ${[...path.slice(path.indexOf(next)), name, next].join(" -> ")}`);
      else if (!state.has(next)) visit(next, [...path, name]);
    }
    state.set(name, "done");
  };
  for (const m of models) if (!state.has(m.name)) visit(m.name, []);
}

export const sandboxSectionSchema = z.strictObject({
  provider: z.string().min(1).optional().describe("Sandbox provider id registered by a plugin: local, aio, e2b."),
  allow_host_bash: z.boolean().default(false),
  bash_output_max_chars: z.number().int().positive().default(20_000),
  read_file_output_max_chars: z.number().int().positive().default(50_000),
  ls_max_depth: z.number().int().positive().default(2),
  bash_command_timeout_seconds: z.number().positive().default(600),
});

export const loggingSectionSchema = z.strictObject({
  level: z
    .enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"])
    .optional()
    .describe("Default info (warn for CLI commands); $ANTLER_LOG_LEVEL overrides it."),
  enhance: z
    .strictObject({
      enabled: z.boolean().default(false).describe("Add trace_id to every log line (gates log output only)."),
      format: z.enum(["json", "text"]).default("json"),
    })
    .default({ enabled: false, format: "json" }),
});

/**
 * Sizing of each PostgreSQL pool Antler opens (Antler's tables and thread checkpoints get one each). Runs hold
 * a connection only for one statement or short transaction at a time, so a pool serves many more live runs
 * than it has connections; the gateway's per-instance run limit (`runs.max_active`) is derived from `max`.
 */
export const postgresPoolSchema = z.strictObject({
  max: z
    .number({ error: "must be a whole number of connections, e.g. 20" })
    .int("must be a whole number of connections, e.g. 20")
    .min(2, "must be at least 2 connections")
    .max(1000, "must be at most 1000 connections; for more, put a pooler such as PgBouncer in front of PostgreSQL")
    .default(20)
    .describe("Most connections per pool (one pool for tables, one for checkpoints). Default 20."),
  acquire_timeout_ms: z
    .number({ error: "must be a number of milliseconds, e.g. 30000" })
    .int("must be a whole number of milliseconds, e.g. 30000")
    .min(100, "must be at least 100 ms (a shorter wait fails statements under ordinary load)")
    .max(600_000, "must be at most 600000 ms (10 minutes)")
    .default(30_000)
    .describe("How long a statement waits for a free connection (or a new one to connect) before it fails. Default 30000."),
});

export const postgresStorageSchema = z.strictObject({
  pool: postgresPoolSchema.default(postgresPoolSchema.parse({})),
});

/** `storage.checkpoint.keep`: what each thread keeps of its checkpoints; the rest is pruned after each run. */
export const checkpointKeepSchema = z.strictObject({
  last: z
    .number({ error: "must be a whole number of checkpoints, e.g. 20" })
    .int("must be a whole number of checkpoints, e.g. 20")
    .min(1, "must be at least 1 (a thread always keeps its newest checkpoint)")
    .max(100_000, "must be at most 100000")
    .default(20)
    .describe("The newest checkpoints kept per thread (and namespace). Default 20."),
  turns: z
    .boolean({ error: "must be true or false" })
    .default(true)
    .describe("Also keep the last checkpoint of every turn, so time travel to any earlier turn keeps working. Default true."),
});

export const storageSectionSchema = z.strictObject({
  backend: z.string().min(1).default("sqlite").describe("sqlite (default), postgres, memory, or an id a storage plugin registers."),
  sqlite_dir: z.string().default("data").describe("Relative to base_dir."),
  postgres_url: z.string().optional(),
  postgres_schema: z.string().optional().describe("Keep Antler's tables and checkpoints in this schema (created if missing)."),
  checkpointer: z.string().min(1).optional().describe("Overrides backend for thread checkpoints (memory, sqlite, postgres, ...)."),
  checkpoint: z
    .strictObject({
      mode: z
        .enum(["delta", "full"])
        .default("delta")
        .describe(
          "delta: each message is stored once and checkpoints name theirs (cost per turn flat in thread length); full: LangGraph's own, the whole list in every checkpoint.",
        ),
      keep: checkpointKeepSchema.default(checkpointKeepSchema.parse({})),
    })
    .default({ mode: "delta", keep: checkpointKeepSchema.parse({}) }),
  postgres: postgresStorageSchema
    .default(postgresStorageSchema.parse({}))
    .describe("PostgreSQL connection settings; used when backend or checkpointer is postgres."),
});

export const pluginEntrySchema = z.union([
  z.string().min(1),
  z
    .strictObject({
      package: z.string().min(1).optional().describe("npm package name, resolved from the config file's folder."),
      path: z.string().min(1).optional().describe("A .js/.mjs file, relative to the config file."),
      enabled: z.boolean().default(true),
      config: z.unknown().optional(),
    })
    .refine((e) => (e.package === undefined) !== (e.path === undefined), { message: "give exactly one of `package` or `path`" }),
]);

export const kernelConfigSchema = z.strictObject({
  preset: z
    .enum(["default", "none"])
    .default("default")
    .describe("default: load the runtime, cassette models and the storage plugin `storage:` names; none: only `plugins:`."),
  base_dir: z.string().default(".antler").describe("Where Antler keeps its data, relative to the config file."),
  default_model: z.string().optional(),
  models: z.array(modelConfigSchema).superRefine(checkFallbacks).default([]),
  sandbox: sandboxSectionSchema.default(sandboxSectionSchema.parse({})),
  logging: loggingSectionSchema.default(loggingSectionSchema.parse({})),
  storage: storageSectionSchema.default(storageSectionSchema.parse({})),
  plugins: z.array(pluginEntrySchema).default([]),
});

/**
 * The validated config: the kernel's keys, and the top-level sections loaded plugins own (`configSections`),
 * which each plugin reads through its own schema's type.
 */
export type KernelConfig = z.output<typeof kernelConfigSchema> & { readonly [section: string]: unknown };
export type KernelConfigInput = z.input<typeof kernelConfigSchema> & { [section: string]: unknown };
export type ModelConfig = z.output<typeof modelConfigSchema>;
export type ModelPricing = NonNullable<ModelConfig["pricing"]>;
export type StorageConfig = z.output<typeof storageSectionSchema>;
export type StorageConfigInput = z.input<typeof storageSectionSchema>;
export type PostgresPoolConfig = z.output<typeof postgresPoolSchema>;
export type CheckpointKeepConfig = z.output<typeof checkpointKeepSchema>;
export type PluginEntryConfig = z.output<typeof pluginEntrySchema>;
