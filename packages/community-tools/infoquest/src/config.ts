import { z } from "zod";

/** The environment variable read when `api_key` is not configured. */
export const INFOQUEST_API_KEY_ENV = "INFOQUEST_API_KEY";
export const INFOQUEST_DEFAULT_SEARCH_URL = "https://search.infoquest.bytepluses.com";
export const INFOQUEST_DEFAULT_READER_URL = "https://reader.infoquest.bytepluses.com";

const days = z.number().int().min(1).max(365);

/** `plugins[i].config` of `@antler/tools-infoquest`. */
export const infoquestConfigSchema = z.strictObject({
  api_key: z
    .string()
    .min(1)
    .optional()
    .describe(`BytePlus InfoQuest API key. Default: the ${INFOQUEST_API_KEY_ENV} environment variable, read per call.`),
  search_url: z
    .url({ protocol: /^https?$/ })
    .default(INFOQUEST_DEFAULT_SEARCH_URL)
    .describe("The search endpoint (web and image search are POSTed here)."),
  reader_url: z
    .url({ protocol: /^https?$/ })
    .default(INFOQUEST_DEFAULT_READER_URL)
    .describe("The reader endpoint (web_fetch is POSTed here)."),
  max_results: z.number().int().min(1).max(50).default(10).describe("Upper bound on results per call, whatever the model asks for."),
  time_range: days.optional().describe("Only web results from the last N days (1-365)."),
  site: z.string().min(1).optional().describe("Search within one site, e.g. github.com."),
  image_time_range: days.optional().describe("Only images from the last N days (1-365)."),
  image_size: z.enum(["l", "m", "i"]).default("i").describe("Image size: l large, m medium, i icon-and-up (any)."),
  fetch_timeout_seconds: z.number().int().positive().optional().describe("The reader's own timeout for loading a page (`timeout`)."),
  fetch_navigation_timeout_seconds: z.number().int().positive().optional().describe("The reader's navigation timeout (`navi_timeout`)."),
  max_snippet_chars: z.number().int().min(40).default(600).describe("Per-result cap on the snippet, in characters."),
  max_title_chars: z.number().int().min(20).default(200).describe("Per-result cap on the title, in characters."),
});

export type InfoquestConfig = z.output<typeof infoquestConfigSchema>;
export type InfoquestConfigInput = z.input<typeof infoquestConfigSchema>;
