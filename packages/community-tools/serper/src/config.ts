import { z } from "zod";

/** The environment variable read when `api_key` is not configured. */
export const SERPER_API_KEY_ENV = "SERPER_API_KEY";
export const SERPER_DEFAULT_BASE_URL = "https://google.serper.dev";
/** Serper's ceiling for `num`. */
export const SERPER_MAX_NUM = 100;

/** `plugins[i].config` of `@antler/tools-serper`. */
export const serperConfigSchema = z.strictObject({
  api_key: z.string().min(1).optional().describe(`Serper API key. Default: the ${SERPER_API_KEY_ENV} environment variable, read per call.`),
  base_url: z
    .url({ protocol: /^https?$/ })
    .default(SERPER_DEFAULT_BASE_URL)
    .describe("API base URL (the host that serves /search and /images)."),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(SERPER_MAX_NUM)
    .default(10)
    .describe("Upper bound on results per call, whatever the model asks for."),
  max_snippet_chars: z.number().int().min(40).default(600).describe("Per-result cap on the snippet, in characters."),
  max_title_chars: z.number().int().min(20).default(200).describe("Per-result cap on the title, in characters."),
  gl: z
    .string()
    .regex(/^[a-z]{2}$/)
    .optional()
    .describe("Google country code the search runs from, e.g. us, de."),
  hl: z.string().min(2).optional().describe("Google interface language, e.g. en, de, pt-br."),
  location: z.string().min(1).optional().describe("Location the search runs from, e.g. 'Berlin, Germany'."),
  include_answer_box: z.boolean().default(true).describe("Put Google's answer box (when it links to a page) before the organic results."),
});

export type SerperConfig = z.output<typeof serperConfigSchema>;
export type SerperConfigInput = z.input<typeof serperConfigSchema>;
