import { z } from "zod";

export const FIRECRAWL_API_KEY_ENV = "FIRECRAWL_API_KEY";

/** `plugins[i].config` of `@antler/tools-firecrawl`. */
export const firecrawlConfigSchema = z.strictObject({
  api_key: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Firecrawl API key, e.g. `api_key: $FIRECRAWL_API_KEY`. Default: FIRECRAWL_API_KEY from the environment. Optional with a self-hosted base_url.",
    ),
  base_url: z
    .string()
    .url()
    .optional()
    .describe("API base URL (the SDK's `apiUrl`): a self-hosted Firecrawl. Default https://api.firecrawl.dev."),
  max_results: z.number().int().min(1).max(100).default(10).describe("Most results per call (Firecrawl's `limit`)."),
  max_snippet_chars: z.number().int().min(50).default(2000).describe("Per-result cap on the snippet (`description`)."),
  max_content_chars: z.number().int().min(200).default(200_000).describe("Cap on one scraped page, before @antler/tools-web's fetch cap."),
  only_main_content: z.boolean().default(true).describe("Scrape only the main content (no headers, navs, footers)."),
  country: z.string().length(2).optional().describe("ISO 3166-1 alpha-2 country for search results."),
  location: z.string().min(1).optional(),
  tbs: z.string().min(1).optional().describe("Time filter, e.g. `qdr:w` (past week)."),
  include_domains: z.array(z.string().min(1)).optional(),
  exclude_domains: z.array(z.string().min(1)).optional(),
  max_age_ms: z.number().int().nonnegative().optional().describe("Accept a cached scrape up to this old (Firecrawl's `maxAge`)."),
  request_timeout_ms: z.number().int().positive().default(60_000).describe("Firecrawl's own timeout for one search or scrape."),
});

export type FirecrawlConfig = z.output<typeof firecrawlConfigSchema>;
export type FirecrawlConfigInput = z.input<typeof firecrawlConfigSchema>;
