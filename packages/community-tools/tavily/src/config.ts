import { z } from "zod";

export const TAVILY_API_KEY_ENV = "TAVILY_API_KEY";

/** `plugins[i].config` of `@antler/tools-tavily`. */
export const tavilyConfigSchema = z.strictObject({
  api_key: z
    .string()
    .min(1)
    .optional()
    .describe("Tavily API key, e.g. `api_key: $TAVILY_API_KEY`. Default: the TAVILY_API_KEY environment variable, read per call."),
  base_url: z.string().url().optional().describe("API base URL (the SDK's `apiBaseURL`). Default https://api.tavily.com."),
  max_results: z.number().int().min(1).max(20).default(10).describe("Most results per call (Tavily's own limit is 20)."),
  max_snippet_chars: z.number().int().min(50).default(2000).describe("Per-result cap on the snippet (`content`)."),
  max_content_chars: z
    .number()
    .int()
    .min(200)
    .default(200_000)
    .describe("Cap on one extracted page, before @antler/tools-web's fetch cap."),
  search_depth: z.enum(["basic", "advanced", "fast", "ultra-fast"]).default("basic"),
  topic: z.enum(["general", "news", "finance"]).default("general"),
  time_range: z.enum(["day", "week", "month", "year"]).optional(),
  include_domains: z.array(z.string().min(1)).optional(),
  exclude_domains: z.array(z.string().min(1)).optional(),
  extract_depth: z
    .enum(["basic", "advanced"])
    .default("basic")
    .describe("web_fetch extraction depth (`advanced` also reads tables and embedded content)."),
  request_timeout_seconds: z
    .number()
    .positive()
    .max(300)
    .default(60)
    .describe("The SDK's own HTTP timeout; @antler/tools-web's timeout_seconds still applies per call."),
});

export type TavilyConfig = z.output<typeof tavilyConfigSchema>;
export type TavilyConfigInput = z.input<typeof tavilyConfigSchema>;
