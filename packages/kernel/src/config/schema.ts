import { z } from "zod";

/**
 * The kernel's own sections of config.yaml. Every object is strict: an unknown key is an error with a
 * did-you-mean suggestion, because a misspelt key silently ignored is a deployment bug waiting to happen.
 * Plugin configuration lives under `plugins[i].config` and is validated by each plugin's own schema.
 */
export const modelConfigSchema = z.strictObject({
  name: z.string().min(1).describe("Unique id used by agents, `--model` and the API."),
  provider: z.string().min(1).describe("Model provider registered by a plugin: openai, anthropic, cassette, ..."),
  model: z.string().min(1).optional().describe("The provider's model id (e.g. gpt-4o-mini)."),
  display_name: z.string().optional(),
  description: z.string().optional(),
  api_key: z.string().optional(),
  base_url: z.string().url().optional().describe("OpenAI-compatible endpoint (vLLM, Ollama, DeepSeek, ...)."),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().positive().optional(),
  timeout_seconds: z.number().positive().optional(),
  max_retries: z.number().int().min(0).optional(),
  context_window: z.number().int().positive().optional(),
  supports_vision: z.boolean().default(false),
  supports_thinking: z.boolean().default(false),
  options: z.record(z.string(), z.unknown()).optional().describe("Provider-specific options, passed through."),
});

export const toolGroupSchema = z.strictObject({ name: z.string().min(1), description: z.string().optional() });

export const configToolSchema = z.strictObject({
  name: z.string().min(1),
  group: z.string().min(1).optional(),
  use: z.string().min(1).describe('"<package or ./path>:<export>" naming a tool, or a factory `(options) => tool`.'),
  options: z.record(z.string(), z.unknown()).optional(),
});

export const sandboxSectionSchema = z.strictObject({
  provider: z.string().min(1).optional().describe("Sandbox provider id registered by a plugin: local, aio, e2b."),
  allow_host_bash: z.boolean().default(false),
  bash_output_max_chars: z.number().int().positive().default(20_000),
  read_file_output_max_chars: z.number().int().positive().default(50_000),
  ls_max_depth: z.number().int().positive().default(2),
  bash_command_timeout_seconds: z.number().positive().default(600),
});

export const loggingSectionSchema = z.strictObject({
  level: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  enhance: z
    .strictObject({
      enabled: z.boolean().default(false).describe("Add trace_id to every log line (gates log output only)."),
      format: z.enum(["json", "text"]).default("json"),
    })
    .default({ enabled: false, format: "json" }),
});

export const storageSectionSchema = z.strictObject({
  backend: z.string().min(1).default("sqlite").describe("sqlite (default), postgres, memory, or an id a storage plugin registers."),
  sqlite_dir: z.string().default("data").describe("Relative to base_dir."),
  postgres_url: z.string().optional(),
  postgres_schema: z.string().optional().describe("Keep Antler's tables and checkpoints in this schema (created if missing)."),
  checkpointer: z.string().min(1).optional().describe("Overrides backend for thread checkpoints (memory, sqlite, postgres, ...)."),
});

export const customSubagentSchema = z.strictObject({
  description: z.string().min(1),
  system_prompt: z.string().min(1),
  tools: z.array(z.string()).optional(),
  disallowed_tools: z.array(z.string()).optional(),
  model: z.string().default("inherit"),
  max_turns: z.number().int().positive().optional(),
  timeout_seconds: z.number().positive().optional(),
});

export const subagentsSectionSchema = z.strictObject({
  enabled: z.boolean().default(false),
  timeout_seconds: z.number().positive().default(1800),
  max_concurrent: z.number().int().positive().default(3),
  max_total_per_run: z.number().int().positive().default(6),
  custom_agents: z.record(z.string(), customSubagentSchema).default({}),
});

// Sections of the built-in middleware plugins (the default chain).
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

export const pluginEntrySchema = z.union([
  z.string().min(1),
  z
    .strictObject({
      package: z.string().min(1).optional().describe("npm package name, resolved from the config file's folder."),
      path: z.string().min(1).optional().describe("A .js/.mjs file, relative to the config file."),
      enabled: z.boolean().default(true),
      config: z.unknown().optional(),
    })
    .refine((e) => (e.package === undefined) !== (e.path === undefined), {
      message: "give exactly one of `package` or `path`",
    }),
]);

export const kernelConfigSchema = z.strictObject({
  preset: z
    .enum(["default", "none"])
    .default("default")
    .describe("default: load the runtime, cassette models and the storage plugin `storage:` names; none: only `plugins:`."),
  base_dir: z.string().default(".antler").describe("Where Antler keeps its data, relative to the config file."),
  recursion_limit: z.number().int().positive().default(1000),
  default_model: z.string().optional(),
  models: z.array(modelConfigSchema).default([]),
  tool_groups: z.array(toolGroupSchema).default([]),
  tools: z.array(configToolSchema).default([]),
  sandbox: sandboxSectionSchema.default(sandboxSectionSchema.parse({})),
  logging: loggingSectionSchema.default(loggingSectionSchema.parse({})),
  storage: storageSectionSchema.default(storageSectionSchema.parse({})),
  subagents: subagentsSectionSchema.default(subagentsSectionSchema.parse({})),
  system_prompt: z.string().optional().describe("Replaces the lead agent's default system prompt."),
  title: titleSectionSchema.default(titleSectionSchema.parse({})),
  summarization: summarizationSectionSchema.default(summarizationSectionSchema.parse({})),
  loop_detection: loopDetectionSectionSchema.default(loopDetectionSectionSchema.parse({})),
  todo: todoSectionSchema.default(todoSectionSchema.parse({})),
  token_usage: toggleSectionSchema.default({ enabled: true }),
  llm_error_handling: toggleSectionSchema.default({ enabled: true }),
  uploads: uploadsSectionSchema.default(uploadsSectionSchema.parse({})),
  plugins: z.array(pluginEntrySchema).default([]),
});

export type KernelConfig = z.output<typeof kernelConfigSchema>;
export type KernelConfigInput = z.input<typeof kernelConfigSchema>;
export type ModelConfig = z.output<typeof modelConfigSchema>;
export type StorageConfig = z.output<typeof storageSectionSchema>;
export type StorageConfigInput = z.input<typeof storageSectionSchema>;
export type PluginEntryConfig = z.output<typeof pluginEntrySchema>;
