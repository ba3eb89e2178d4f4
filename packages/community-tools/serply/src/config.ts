import { z } from "zod";

/** The environment variable read when `api_key` is not configured. */
export const SERPLY_API_KEY_ENV = "SERPLY_API_KEY";
export const SERPLY_DEFAULT_BASE_URL = "https://api.serply.io/v1";
/** Serply's ceiling for `num` (one Google results page of up to 100). */
export const SERPLY_MAX_NUM = 100;
/** The proxy locations Serply serves searches from (`X-Proxy-Location`). */
export const SERPLY_PROXY_LOCATIONS = ["US", "CA", "IE", "GB", "FR", "DE", "SE", "IN", "JP", "KR", "SG", "AU", "BR"] as const;

/** `plugins[i].config` of `@antler/tools-serply`. */
export const serplyConfigSchema = z.strictObject({
  api_key: z.string().min(1).optional().describe(`Serply API key. Default: the ${SERPLY_API_KEY_ENV} environment variable, read per call.`),
  base_url: z
    .url({ protocol: /^https?$/ })
    .default(SERPLY_DEFAULT_BASE_URL)
    .describe("API base URL, up to and including the version (the host that serves /search/<params>)."),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(SERPLY_MAX_NUM)
    .default(10)
    .describe("Upper bound on results per call, whatever the model asks for."),
  max_snippet_chars: z.number().int().min(40).default(600).describe("Per-result cap on the description, in characters."),
  max_title_chars: z.number().int().min(20).default(200).describe("Per-result cap on the title, in characters."),
  gl: z
    .string()
    .regex(/^[a-z]{2}$/)
    .optional()
    .describe("Google country code the search runs from, e.g. us, de."),
  hl: z.string().min(2).optional().describe("Google interface language, e.g. en, lang_de."),
  lr: z
    .string()
    .regex(/^lang_[a-zA-Z-]+$/)
    .optional()
    .describe("Restrict results to one language, e.g. lang_en."),
  proxy_location: z.enum(SERPLY_PROXY_LOCATIONS).optional().describe("Where Serply runs the search (X-Proxy-Location), e.g. US, DE."),
  device: z.enum(["desktop", "mobile"]).default("desktop").describe("Desktop or mobile results (X-User-Agent)."),
});

export type SerplyConfig = z.output<typeof serplyConfigSchema>;
export type SerplyConfigInput = z.input<typeof serplyConfigSchema>;
