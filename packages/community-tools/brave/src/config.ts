import { z } from "zod";

/** The environment variable read when `api_key` is not configured (DeerFlow's name for it). */
export const BRAVE_API_KEY_ENV = "BRAVE_SEARCH_API_KEY";
export const BRAVE_DEFAULT_BASE_URL = "https://api.search.brave.com/res/v1";
/** Brave's own ceilings for `count`: 20 for web search, 200 for image search. */
export const BRAVE_MAX_WEB_COUNT = 20;
export const BRAVE_MAX_IMAGE_COUNT = 200;

/** `plugins[i].config` of `@antler/tools-brave`. */
export const braveConfigSchema = z.strictObject({
  api_key: z
    .string()
    .min(1)
    .optional()
    .describe(`Brave Search API subscription token. Default: the ${BRAVE_API_KEY_ENV} environment variable, read per call.`),
  base_url: z
    .url({ protocol: /^https?$/ })
    .default(BRAVE_DEFAULT_BASE_URL)
    .describe("API base URL, up to and including `/res/v1`."),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(BRAVE_MAX_IMAGE_COUNT)
    .default(10)
    .describe("Upper bound on results per call, whatever the model asks for (web search stops at 20 regardless)."),
  max_snippet_chars: z.number().int().min(40).default(600).describe("Per-result cap on the snippet, in characters."),
  max_title_chars: z.number().int().min(20).default(200).describe("Per-result cap on the title, in characters."),
  safesearch: z
    .enum(["off", "moderate", "strict"])
    .default("moderate")
    .describe("Adult-content filter. Image search knows only off and strict; moderate becomes strict there."),
  country: z
    .string()
    .regex(/^[A-Za-z]{2}$|^ALL$/)
    .optional()
    .describe("Two-letter country code the results come from, e.g. US, DE; ALL for no preference."),
  search_lang: z.string().min(2).optional().describe("Language of the results, e.g. en, de, pt-br."),
  extra_snippets: z
    .boolean()
    .default(false)
    .describe("Ask for up to five extra excerpts per web result (paid plans) and append them to the snippet."),
});

export type BraveConfig = z.output<typeof braveConfigSchema>;
export type BraveConfigInput = z.input<typeof braveConfigSchema>;
