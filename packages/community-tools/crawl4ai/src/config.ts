import { z } from "zod";

/** The environment variable read when `api_key` is not configured: the server's `CRAWL4AI_API_TOKEN`. */
export const CRAWL4AI_API_TOKEN_ENV = "CRAWL4AI_API_TOKEN";
export const CRAWL4AI_DEFAULT_BASE_URL = "http://localhost:11235";

/** `plugins[i].config` of `@antler/tools-crawl4ai`. */
export const crawl4aiConfigSchema = z
  .strictObject({
    base_url: z
      .url({ protocol: /^https?$/ })
      .default(CRAWL4AI_DEFAULT_BASE_URL)
      .describe("The self-hosted Crawl4AI server (the Docker image listens on 11235)."),
    api_key: z
      .string()
      .min(1)
      .optional()
      .describe(
        `The server's API token, sent as Authorization: Bearer. Default: ${CRAWL4AI_API_TOKEN_ENV} from the environment; without either, no Authorization header (a server without a token).`,
      ),
    filter: z
      .enum(["fit", "raw", "bm25", "llm"])
      .default("fit")
      .describe("Markdown filter (`f`): fit (pruned main content), raw (whole page), bm25 or llm (relevance to `query`)."),
    query: z.string().min(1).optional().describe("The query (`q`) the bm25 and llm filters rank content against."),
    bypass_cache: z.boolean().default(false).describe("Ask the server to crawl again instead of answering from its cache (`c`)."),
    max_content_chars: z.number().int().min(200).default(200_000).describe("Cap on one page, before @antler/tools-web's fetch cap."),
  })
  .refine((c) => (c.filter !== "bm25" && c.filter !== "llm") || c.query !== undefined, {
    message: "filter bm25 and llm rank the page against a query: set query, or use filter fit or raw",
    path: ["query"],
  });

export type Crawl4aiConfig = z.output<typeof crawl4aiConfigSchema>;
export type Crawl4aiConfigInput = z.input<typeof crawl4aiConfigSchema>;
