import { z } from "zod";

/** The environment variable read when `api_key` is not configured: a WSA service API key, not a SecretId/SecretKey pair. */
export const TENCENT_WSA_API_KEY_ENV = "TENCENTCLOUD_WSA_APIKEY";
export const TENCENT_WSA_DEFAULT_BASE_URL = "https://api.wsa.cloud.tencent.com";
/** SearchPro answers 10 results unless `Cnt` asks for more. */
export const TENCENT_WSA_DEFAULT_COUNT = 10;
/** The most SearchPro returns (`Cnt` = 50). */
export const TENCENT_WSA_MAX_RESULTS = 50;

/** `plugins[i].config` of `@antler/tools-tencent-wsa`. */
export const tencentWsaConfigSchema = z.strictObject({
  api_key: z
    .string()
    .min(1)
    .optional()
    .describe(`Tencent Cloud WSA service API key. Default: the ${TENCENT_WSA_API_KEY_ENV} environment variable, read per call.`),
  base_url: z
    .url({ protocol: /^https?$/ })
    .default(TENCENT_WSA_DEFAULT_BASE_URL)
    .describe("API base URL (the host that serves POST /SearchPro)."),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(TENCENT_WSA_MAX_RESULTS)
    .default(10)
    .describe(
      "Upper bound on results per call (at most 50). Above 10 the request carries Cnt (20/30/40/50), which needs a Tencent Cloud plan that supports it.",
    ),
  mode: z
    .union([z.literal(0), z.literal(1), z.literal(2)])
    .optional()
    .describe("Result type: 0 natural web results (Tencent's default when omitted), 1 vertical (VR) cards, 2 both."),
  site: z.string().min(1).optional().describe("Search within one site, e.g. qq.com (applies to natural results)."),
  industry: z
    .enum(["gov", "news", "acad", "finance"])
    .optional()
    .describe("Vertical domain filter (government, news media, academic, finance); needs a plan that supports it."),
  max_snippet_chars: z.number().int().min(40).default(600).describe("Per-result cap on the snippet, in characters."),
  max_title_chars: z.number().int().min(20).default(200).describe("Per-result cap on the title, in characters."),
});

export type TencentWsaConfig = z.output<typeof tencentWsaConfigSchema>;
export type TencentWsaConfigInput = z.input<typeof tencentWsaConfigSchema>;
