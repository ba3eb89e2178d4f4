import { z } from "zod";

/** The environment variable read when `api_key` is not configured. */
export const CRW_API_KEY_ENV = "CRW_API_KEY";
/** The hosted API; a self-hosted engine (`docker run -p 3000:3000 ghcr.io/fastcrw/crw`) needs no key. */
export const FASTCRW_DEFAULT_BASE_URL = "https://api.fastcrw.com";
/** fastCRW's ceiling for the search `limit`. */
export const FASTCRW_MAX_LIMIT = 20;

/** `plugins[i].config` of `@antler/tools-fastcrw`. */
export const fastcrwConfigSchema = z.strictObject({
  api_key: z
    .string()
    .min(1)
    .optional()
    .describe(`fastCRW API key (Bearer). Default: ${CRW_API_KEY_ENV} from the environment. Needed for the hosted API only.`),
  base_url: z
    .url({ protocol: /^https?$/ })
    .default(FASTCRW_DEFAULT_BASE_URL)
    .describe("API base URL: the hosted API, or a self-hosted engine such as http://localhost:3000."),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(FASTCRW_MAX_LIMIT)
    .default(5)
    .describe("Upper bound on results per call, whatever the model asks for (fastCRW: 20)."),
  lang: z.string().min(2).optional().describe("Result language, e.g. en."),
  tbs: z.enum(["qdr:h", "qdr:d", "qdr:w", "qdr:m", "qdr:y"]).optional().describe("Time filter: past hour, day, week, month or year."),
  only_main_content: z.boolean().default(true).describe("Scrape only the main content (no navigation, ads, boilerplate)."),
  render_js: z.boolean().optional().describe("true: always render JavaScript; false: never; unset: fastCRW decides."),
  deadline_ms: z.number().int().min(1).max(60_000).optional().describe("fastCRW's own end-to-end budget for one scrape (default 8000)."),
  max_snippet_chars: z.number().int().min(40).default(600).describe("Per-result cap on the snippet, in characters."),
  max_title_chars: z.number().int().min(20).default(200).describe("Per-result cap on the title, in characters."),
  max_content_chars: z.number().int().min(200).default(200_000).describe("Cap on one scraped page, before @antler/tools-web's fetch cap."),
});

export type FastcrwConfig = z.output<typeof fastcrwConfigSchema>;
export type FastcrwConfigInput = z.input<typeof fastcrwConfigSchema>;
