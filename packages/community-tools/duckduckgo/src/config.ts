import { z } from "zod";

export const DUCKDUCKGO_DEFAULT_BASE_URL = "https://html.duckduckgo.com";
/** The main site: it serves the image results page (which carries the `vqd` token) and the `i.js` image endpoint. */
export const DUCKDUCKGO_DEFAULT_IMAGES_BASE_URL = "https://duckduckgo.com";
/** A browser-like User-Agent: the HTML endpoint serves its bot challenge to obvious scripts more often. */
export const DUCKDUCKGO_DEFAULT_USER_AGENT =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36";

/** `plugins[i].config` of `@antler/tools-duckduckgo`. No key: DuckDuckGo's HTML and image endpoints are public. */
export const duckduckgoConfigSchema = z.strictObject({
  base_url: z
    .url({ protocol: /^https?$/ })
    .default(DUCKDUCKGO_DEFAULT_BASE_URL)
    .describe("Origin that serves the HTML endpoint; web_search requests go to `<base_url>/html/`."),
  images_base_url: z
    .url({ protocol: /^https?$/ })
    .default(DUCKDUCKGO_DEFAULT_IMAGES_BASE_URL)
    .describe(
      "Origin that serves the image results page and `i.js`; image_search requests go to `<images_base_url>/?q=…` and `<images_base_url>/i.js`.",
    ),
  max_results: z.number().int().min(1).max(50).default(10).describe("Upper bound on results per call, whatever the model asks for."),
  max_pages: z
    .number()
    .int()
    .min(1)
    .max(5)
    .default(2)
    .describe("Result pages (about ten results each) fetched at most to reach max_results."),
  max_snippet_chars: z.number().int().min(40).default(600).describe("Per-result cap on the snippet, in characters."),
  max_title_chars: z.number().int().min(20).default(200).describe("Per-result cap on the title, in characters."),
  region: z
    .string()
    .regex(/^[a-z]{2}-[a-z]{2}$/)
    .default("wt-wt")
    .describe("DuckDuckGo region (`kl`), e.g. us-en, de-de; wt-wt is no region."),
  safesearch: z
    .enum(["off", "moderate", "strict"])
    .default("moderate")
    .describe("Adult-content filter (`kp`). Image search knows only on and off (`p`): moderate is on there."),
  time_range: z
    .enum(["day", "week", "month", "year"])
    .optional()
    .describe("Only results from the last day, week, month or year (`df`; for images `f=time:…`). Unset: any time."),
  user_agent: z.string().min(1).default(DUCKDUCKGO_DEFAULT_USER_AGENT).describe("User-Agent header of the requests."),
});

export type DuckDuckGoConfig = z.output<typeof duckduckgoConfigSchema>;
export type DuckDuckGoConfigInput = z.input<typeof duckduckgoConfigSchema>;
