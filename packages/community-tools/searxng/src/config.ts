import { z } from "zod";

/** `plugins[i].config` of `@antler/tools-searxng`. */
export const searxngConfigSchema = z.strictObject({
  base_url: z
    .string()
    .url()
    .default("http://localhost:8088")
    .describe("The SearXNG instance. Its settings.yml must list `json` under `search.formats`."),
  headers: z
    .record(z.string(), z.string())
    .default({})
    .describe('Extra request headers, e.g. for an auth proxy in front of the instance: { Authorization: "Bearer $SEARXNG_TOKEN" }.'),
  categories: z.array(z.string().min(1)).default(["general"]).describe("SearXNG categories for web_search."),
  image_categories: z.array(z.string().min(1)).default(["images"]).describe("SearXNG categories for image_search."),
  engines: z.array(z.string().min(1)).optional().describe("Restrict to these engines (default: the instance's enabled engines)."),
  language: z.string().min(1).optional().describe("Language code, e.g. `en` or `de-CH` (default: the instance's)."),
  safesearch: z
    .union([z.literal(0), z.literal(1), z.literal(2)])
    .optional()
    .describe("0 off, 1 moderate, 2 strict."),
  time_range: z.enum(["day", "week", "month", "year"]).optional(),
  max_results: z.number().int().min(1).max(100).default(10).describe("Most results this provider returns per call."),
  max_snippet_chars: z.number().int().min(50).default(2000).describe("Per-result cap on the snippet (`content`)."),
});

export type SearxngConfig = z.output<typeof searxngConfigSchema>;
export type SearxngConfigInput = z.input<typeof searxngConfigSchema>;
