import { z } from "zod";

/** The environment variable read when `api_key` is not configured. */
export const EXA_API_KEY_ENV = "EXA_API_KEY";
export const EXA_DEFAULT_BASE_URL = "https://api.exa.ai";
/** Exa's ceiling for `numResults`. */
export const EXA_MAX_NUM_RESULTS = 100;

const domain = z
  .string()
  .regex(/^[a-z0-9.-]+(\/\S*)?$/i, "a domain such as arxiv.org (optionally with a path)")
  .describe("A domain, e.g. arxiv.org.");

/** `plugins[i].config` of `@antler/tools-exa`. */
export const exaConfigSchema = z.strictObject({
  api_key: z.string().min(1).optional().describe(`Exa API key. Default: the ${EXA_API_KEY_ENV} environment variable, read per call.`),
  base_url: z
    .url({ protocol: /^https?$/ })
    .default(EXA_DEFAULT_BASE_URL)
    .describe("API base URL (the host that serves /search and /contents)."),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(EXA_MAX_NUM_RESULTS)
    .default(10)
    .describe("Upper bound on results per call, whatever the model asks for."),
  search_type: z
    .enum(["auto", "neural", "keyword", "fast"])
    .default("auto")
    .describe("Exa search type: auto lets Exa choose; neural is embedding search; keyword is classic; fast trades quality for latency."),
  snippet_source: z
    .enum(["highlights", "text"])
    .default("highlights")
    .describe("What becomes a result's snippet: the passages Exa picks as most relevant, or the start of the page text."),
  max_snippet_chars: z
    .number()
    .int()
    .min(40)
    .default(600)
    .describe("Per-result cap on the snippet, in characters (also sent to Exa as maxCharacters)."),
  max_title_chars: z.number().int().min(20).default(200).describe("Per-result cap on the title, in characters."),
  fetch_max_chars: z
    .number()
    .int()
    .min(200)
    .default(20_000)
    .describe("web_fetch: most characters of page text asked from /contents (the tool layer trims further)."),
  max_age_hours: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("web_fetch: accept Exa's cached copy only when younger than this; 0 always crawls live. Unset: Exa's default."),
  include_domains: z.array(domain).optional().describe("Search only these domains."),
  exclude_domains: z.array(domain).optional().describe("Never return results from these domains."),
});

export type ExaConfig = z.output<typeof exaConfigSchema>;
export type ExaConfigInput = z.input<typeof exaConfigSchema>;
