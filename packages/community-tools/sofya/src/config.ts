import { z } from "zod";

/** The environment variable read when `api_key` is not configured. */
export const SOFYA_API_KEY_ENV = "SOFYA_API_KEY";
export const SOFYA_DEFAULT_BASE_URL = "https://sofya.co/v1";
/** The most results Sofya's search takes (`max_results`); it refuses more. */
export const SOFYA_MAX_RESULTS = 20;
/** The default per-result cap on the page content a search returns. */
export const SOFYA_DEFAULT_CONTENT_CHARS = 2000;

/** `plugins[i].config` of `@antler/tools-sofya`. */
export const sofyaConfigSchema = z.strictObject({
  api_key: z.string().min(1).optional().describe(`Sofya API key. Default: the ${SOFYA_API_KEY_ENV} environment variable, read per call.`),
  base_url: z
    .url({ protocol: /^https?$/ })
    .default(SOFYA_DEFAULT_BASE_URL)
    .describe("API base URL, up to and including the version (the host that serves /search and /fetch)."),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(SOFYA_MAX_RESULTS)
    .default(5)
    .describe("Upper bound on results per call, whatever the model asks for (Sofya: 20)."),
  search_depth: z
    .enum(["basic", "snippets"])
    .default("basic")
    .describe("basic: each result carries the text of its page; snippets: links and short snippets only."),
  max_content_chars: z
    .number()
    .int()
    .min(100)
    .default(SOFYA_DEFAULT_CONTENT_CHARS)
    .describe("Per-result cap on the page content a search returns, in characters."),
  max_title_chars: z.number().int().min(20).default(200).describe("Per-result cap on the title, in characters."),
  freshness: z.enum(["day", "week", "month", "year"]).optional().describe("Only results published within this window."),
  include_domains: z.array(z.string().min(1)).max(10).optional().describe("Restrict the search to these host names (at most 10)."),
  topic: z.enum(["general", "news"]).optional().describe("news: search news sources, with publication dates."),
  max_fetch_chars: z.number().int().min(200).default(200_000).describe("Cap on one fetched page, before @antler/tools-web's fetch cap."),
});

export type SofyaConfig = z.output<typeof sofyaConfigSchema>;
export type SofyaConfigInput = z.input<typeof sofyaConfigSchema>;
