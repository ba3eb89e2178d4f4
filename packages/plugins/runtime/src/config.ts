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
    enabled: z.boolean().default(false),
    model_name: z.string().optional(),
    trigger_tokens: z.number().int().positive().default(12_000),
    keep_messages: z.number().int().positive().default(10).describe("At most this many recent messages stay verbatim."),
    target_tokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("After a summary the verbatim tail fits this many tokens; default 60% of trigger_tokens. Must be below it."),
  })
  .refine((s) => s.target_tokens === undefined || s.target_tokens < s.trigger_tokens, {
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
