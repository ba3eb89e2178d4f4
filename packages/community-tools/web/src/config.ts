import { z } from "zod";

export const DIRECT_PROVIDER = "direct";

const providerName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,40}$/, "a provider name: lower-case letters, digits, _ and -")
  .describe("A registered web provider's name (`direct`, or one a provider plugin registers: `tavily`, `searxng`, ...).");

export const retrySchema = z.strictObject({
  attempts: z.number().int().min(1).max(10).default(3).describe("Tries in total for HTTP 429 and 5xx answers (1 = no retry)."),
  initial_delay_ms: z.number().int().nonnegative().default(500).describe("Backoff before the 2nd try; doubled each time, with jitter."),
  max_delay_ms: z
    .number()
    .int()
    .nonnegative()
    .default(10_000)
    .describe("Longest wait between tries. A Retry-After longer than this is not waited for: the failure is reported at once."),
});

/** `plugins[i].config` of `@antler/tools-web`. */
export const webToolsConfigSchema = z.strictObject({
  search: providerName.nullable().default(null).describe("Provider that serves `web_search`; null leaves the tool out."),
  fetch: providerName
    .nullable()
    .default(DIRECT_PROVIDER)
    .describe("Provider that serves `web_fetch`. Default `direct`: a guarded HTTP GET with local extraction; null leaves it out."),
  images: providerName.nullable().default(null).describe("Provider that serves `image_search`; null leaves the tool out."),
  group: z.string().min(1).default("web").describe("Tool group of the three tools."),
  max_results: z.number().int().min(1).max(50).default(5).describe("Default `max_results` of web_search and image_search."),
  max_results_cap: z.number().int().min(1).max(100).default(20).describe("Largest `max_results` the model may ask for."),
  snippet_max_chars: z.number().int().min(50).default(2000).describe("Per-result cap on search snippets."),
  fetch_max_chars: z.number().int().min(200).default(4096).describe("web_fetch returns at most this many characters of extracted text."),
  timeout_seconds: z.number().positive().max(600).default(30).describe("Per provider call (one try)."),
  retry: retrySchema.default(retrySchema.parse({})),
  allow_private_addresses: z
    .boolean()
    .default(false)
    .describe(
      "Opt-out of the SSRF guard's address checks, for intentional internal targets (a loopback demo page, an intranet). Cloud-metadata addresses stay blocked.",
    ),
  pin_resolved_addresses: z
    .boolean()
    .default(true)
    .describe(
      "Re-check the addresses each page connection resolves to, at connect time, so a name cannot pass the check and then resolve to a private address (DNS rebinding).",
    ),
  max_redirects: z.number().int().min(0).max(20).default(5).describe("Redirect hops followed (each one re-checked)."),
  direct: z
    .strictObject({
      max_response_bytes: z
        .number()
        .int()
        .positive()
        .default(2 * 1024 * 1024)
        .describe(
          "The `direct` provider stops reading a page after this many bytes (extraction is synchronous work; web_fetch returns 4 KB anyway).",
        ),
      user_agent: z.string().min(1).default("Mozilla/5.0 (compatible; AntlerWebFetch/0.1)").describe("User-Agent of `direct` requests."),
      max_pdf_pages: z.number().int().positive().max(1000).default(50).describe("Pages of a fetched PDF whose text is read."),
    })
    .default({ max_response_bytes: 2 * 1024 * 1024, user_agent: "Mozilla/5.0 (compatible; AntlerWebFetch/0.1)", max_pdf_pages: 50 }),
});

export type WebToolsConfig = z.output<typeof webToolsConfigSchema>;
export type WebToolsConfigInput = z.input<typeof webToolsConfigSchema>;
export type RetryConfig = z.output<typeof retrySchema>;
