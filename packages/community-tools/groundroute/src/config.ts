import { z } from "zod";

/** The environment variable read when `api_key` is not configured. */
export const GROUNDROUTE_API_KEY_ENV = "GROUNDROUTE_API_KEY";
export const GROUNDROUTE_DEFAULT_BASE_URL = "https://api.groundroute.ai";
/** GroundRoute's ceiling for `max_results`. */
export const GROUNDROUTE_MAX_RESULTS = 50;

/** `plugins[i].config` of `@antler/tools-groundroute`. */
export const groundrouteConfigSchema = z.strictObject({
  api_key: z
    .string()
    .min(1)
    .optional()
    .describe(`GroundRoute API key. Default: the ${GROUNDROUTE_API_KEY_ENV} environment variable, read per call.`),
  base_url: z
    .url({ protocol: /^https?$/ })
    .default(GROUNDROUTE_DEFAULT_BASE_URL)
    .describe("API base URL (the host that serves POST /v1/search)."),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(GROUNDROUTE_MAX_RESULTS)
    .default(10)
    .describe("Upper bound on results per call, whatever the model asks for (GroundRoute: 50)."),
  mode: z
    .enum(["auto", "web", "news", "academic"])
    .default("auto")
    .describe("Search mode for web_search: auto (GroundRoute classifies the query and picks the engine), or force web, news or academic."),
  freshness: z
    .enum(["fresh", "semi", "static"])
    .optional()
    .describe("Recency: fresh (last day/week), semi (last month), static (timeless); unset: detected from the query."),
  domains: z.array(z.string().min(1)).min(1).optional().describe("Only results from these domains, e.g. [arxiv.org]."),
  lang: z.string().min(2).optional().describe("ISO 639-1 language to bias results, e.g. en."),
  country: z
    .string()
    .regex(/^[a-z]{2}$/)
    .optional()
    .describe("ISO 3166-1 alpha-2 country to bias results, e.g. us."),
  max_snippet_chars: z.number().int().min(40).default(600).describe("Per-result cap on the snippet, in characters."),
  max_title_chars: z.number().int().min(20).default(200).describe("Per-result cap on the title, in characters."),
  max_content_chars: z.number().int().min(200).default(200_000).describe("Cap on one fetched page, before @antler/tools-web's fetch cap."),
});

export type GroundrouteConfig = z.output<typeof groundrouteConfigSchema>;
export type GroundrouteConfigInput = z.input<typeof groundrouteConfigSchema>;
