import { AntlerError, ErrorCodes, type KernelConfig } from "@antler/kernel";
import { resolveConfiguredModule } from "@antler/kernel/config";
import { z } from "zod";

// The top-level config.yaml sections the runtime owns (`configSections`): the kernel validates them, strictly and
// with line numbers, only while this plugin is loaded.
export const titleSectionSchema = z.strictObject({
  enabled: z.boolean().default(true),
  max_words: z.number().int().positive().default(6),
  max_chars: z.number().int().positive().default(60),
  model_name: z.string().optional().describe("Model for titles; default: the run's model. Falls back to a local title."),
});
export const summarizationSectionSchema = z
  .strictObject({
    enabled: z
      .union([z.boolean(), z.literal("auto")])
      .default("auto")
      .describe("auto: on when the run's model has a known context window (models[].context_window or the built-in table)."),
    model_name: z.string().optional(),
    trigger_tokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "Summarize when the summary plus the verbatim messages pass this; default window_fraction of the context window, or 12000.",
      ),
    window_fraction: z
      .number()
      .gt(0)
      .lt(1)
      .default(0.7)
      .describe(
        "The share of the model's context window the conversation may fill before a summary (the rest is for the system prompt, tools and the reply).",
      ),
    keep_messages: z.number().int().positive().default(10).describe("At most this many recent messages stay verbatim."),
    target_tokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("After a summary the verbatim tail fits this many tokens; default 60% of trigger_tokens. Must be below it."),
  })
  .refine((s) => s.target_tokens === undefined || s.trigger_tokens === undefined || s.target_tokens < s.trigger_tokens, {
    message: "target_tokens must be below trigger_tokens (it is where a summary leaves the thread)",
    path: ["target_tokens"],
  });
export const loopDetectionSectionSchema = z.strictObject({
  enabled: z.boolean().default(true),
  warn_threshold: z.number().int().positive().default(3),
  hard_limit: z.number().int().positive().default(5),
  window_size: z.number().int().positive().default(20),
});
export const toggleSectionSchema = z.strictObject({ enabled: z.boolean().default(true) });
export const todoSectionSchema = z.strictObject({ enabled: z.boolean().default(false).describe("Plan mode: the write_todos tool.") });
export const uploadsSectionSchema = z.strictObject({
  max_files: z.number().int().positive().default(10),
  max_file_bytes: z
    .number()
    .int()
    .positive()
    .default(50 * 1024 * 1024),
  auto_convert_documents: z
    .boolean()
    .default(false)
    .describe("Convert uploaded PDF, DOCX, XLSX and PPTX files to Markdown beside the original (`report.pdf` → `report.pdf.md`)."),
  max_pages: z
    .number()
    .int()
    .positive()
    .default(100)
    .describe("Most PDF pages, slides or sheets converted per document; the Markdown says when more were left out."),
  max_markdown_bytes: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024)
    .describe("Largest Markdown written per document, in bytes; longer text is cut and the cut is noted at the end."),
});

export const toolGroupSchema = z.strictObject({ name: z.string().min(1), description: z.string().optional() });

export const configToolSchema = z.strictObject({
  name: z.string().min(1),
  group: z.string().min(1).optional(),
  idempotent: z
    .boolean()
    .default(false)
    .describe("Running it twice does no harm: a call in flight when its run's instance stopped is made again after a takeover."),
  use: z.string().min(1).describe('"<package or ./path>:<export>" naming a tool, or a factory `(options) => tool`.'),
  options: z.record(z.string(), z.unknown()).optional(),
});

/**
 * A `tools:` entry's `use:` split into the module's file (resolved from the config folder, not imported) and the
 * export's name; a `use:` without an export, or a module that does not resolve, is a located error.
 */
export function configToolModule(use: string, configDir: string, where: string): { file: string; exportName: string } {
  const cut = use.lastIndexOf(":");
  if (cut <= 0 || cut === use.length - 1) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `"${use}" does not name an export`, {
      where,
      hint: 'Write "<package or ./path>:<export>", e.g. "./tools/search.js:webSearch".',
    });
  }
  return { file: resolveConfiguredModule(use.slice(0, cut), configDir, where), exportName: use.slice(cut + 1) };
}

/** Where model limits are counted across instances (`requests_per_minute` of `models:` entries). */
export const modelLimitsSectionSchema = z.strictObject({
  redis_url: z
    .string()
    .regex(/^rediss?:\/\//, "redis_url must start with redis:// or rediss://")
    .optional()
    .describe("Count requests_per_minute in Redis, shared by every instance; write it as $REDIS_URL."),
  key_prefix: z.string().default("antler:"),
});

export const budgetSchema = z.strictObject({
  name: z.string().min(1).describe("Named in the refusal (ANTLER_ERR_BUDGET_EXCEEDED)."),
  usd_per_user_per_day: z.number().min(0, "a budget cannot be negative").describe("Most a user's runs may cost per UTC day."),
  users: z.array(z.string().min(1)).optional().describe("Users it applies to; default: every user."),
});
export const budgetsSectionSchema = z
  .array(budgetSchema)
  .refine((budgets) => new Set(budgets.map((b) => b.name)).size === budgets.length, { message: "budget names must be unique" });
export type Budget = z.output<typeof budgetSchema>;

/** The runtime's sections, with the defaults a config that omits them gets. */
export const runtimeConfigSections = {
  recursion_limit: z.number().int().positive().default(1000),
  system_prompt: z.string().optional().describe("Replaces the lead agent's default system prompt."),
  tool_groups: z.array(toolGroupSchema).default([]),
  tools: z.array(configToolSchema).default([]),
  title: titleSectionSchema.default(titleSectionSchema.parse({})),
  summarization: summarizationSectionSchema.default(summarizationSectionSchema.parse({})),
  loop_detection: loopDetectionSectionSchema.default(loopDetectionSectionSchema.parse({})),
  todo: todoSectionSchema.default(todoSectionSchema.parse({})),
  token_usage: toggleSectionSchema.default({ enabled: true }),
  llm_error_handling: toggleSectionSchema.default({ enabled: true }),
  uploads: uploadsSectionSchema.default(uploadsSectionSchema.parse({})),
  model_limits: modelLimitsSectionSchema.default(modelLimitsSectionSchema.parse({})),
  budgets: budgetsSectionSchema.default([]),
};

export type RuntimeConfig = KernelConfig & {
  readonly [K in keyof typeof runtimeConfigSections]: z.output<(typeof runtimeConfigSections)[K]>;
};

/** The kernel config with the runtime's sections typed; they are there whenever this plugin is loaded. */
export function runtimeConfig(config: KernelConfig): RuntimeConfig {
  return config as RuntimeConfig;
}

/** Whether the subagents plugin's section switches subagents on (false when that plugin is not loaded). */
export function subagentsEnabled(config: KernelConfig): boolean {
  return (config.subagents as { enabled?: unknown } | undefined)?.enabled === true;
}

/**
 * Context windows (in tokens) of common models, for when a `models:` entry does not give `context_window`. A
 * model id is matched by prefix, most specific first; an unknown model has no default (summarization then stays
 * off unless switched on). The numbers are the providers' published input limits; set `context_window` when a
 * deployment allows less.
 */
const KNOWN_WINDOWS: ReadonlyArray<readonly [prefix: string, tokens: number]> = [
  ["gpt-4.1", 1_047_576],
  ["gpt-4o", 128_000],
  ["gpt-4-turbo", 128_000],
  ["gpt-5", 400_000],
  ["o1", 200_000],
  ["o3", 200_000],
  ["o4-mini", 200_000],
  ["claude-", 200_000],
  ["gemini-1.5", 1_048_576],
  ["gemini-2", 1_048_576],
];

/** Providers whose every model shares one window. */
const PROVIDER_WINDOWS: Readonly<Record<string, number>> = { anthropic: 200_000 };

/** The model's context window: the entry's `context_window`, else the table above, else undefined. */
export function contextWindowOf(entry: {
  provider: string;
  model?: string | undefined;
  context_window?: number | undefined;
}): number | undefined {
  if (entry.context_window !== undefined) return entry.context_window;
  const id = (entry.model ?? "").toLowerCase().replace(/^.*\//, "");
  for (const [prefix, tokens] of KNOWN_WINDOWS) if (id.startsWith(prefix)) return tokens;
  return PROVIDER_WINDOWS[entry.provider];
}

/** The share of the window the summary and the verbatim messages may use before a summary is made. */
export const DEFAULT_WINDOW_FRACTION = 0.7;

/** Trigger when the window is unknown and summarization is switched on explicitly. */
export const DEFAULT_TRIGGER_TOKENS = 12_000;

export interface SummarizationBudget {
  readonly triggerTokens: number;
  readonly targetTokens: number | undefined;
}

/**
 * When summarization runs and at what size: `enabled: auto` (the default) needs a known context window;
 * `trigger_tokens` wins over the window's `window_fraction`; null means off.
 */
export function summarizationBudget(
  section: {
    enabled: boolean | "auto";
    trigger_tokens?: number | undefined;
    target_tokens?: number | undefined;
    window_fraction: number;
  },
  contextWindow: number | undefined,
): SummarizationBudget | null {
  if (section.enabled === false) return null;
  if (section.enabled === "auto" && contextWindow === undefined && section.trigger_tokens === undefined) return null;
  const triggerTokens =
    section.trigger_tokens ??
    (contextWindow === undefined ? DEFAULT_TRIGGER_TOKENS : Math.max(1, Math.floor(contextWindow * section.window_fraction)));
  return { triggerTokens, targetTokens: section.target_tokens };
}
