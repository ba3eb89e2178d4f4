import { z } from "zod";

export const JINA_API_KEY_ENV = "JINA_API_KEY";

/** `plugins[i].config` of `@antler/tools-jina`. */
export const jinaConfigSchema = z.strictObject({
  api_key: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Jina API key, e.g. `api_key: $JINA_API_KEY`. Default: JINA_API_KEY from the environment. Optional: without one Jina applies a lower rate limit.",
    ),
  base_url: z.string().url().default("https://r.jina.ai").describe("Reader endpoint (a self-hosted reader, or a local fake in tests)."),
  timeout_seconds: z.number().int().min(1).max(180).default(30).describe("Sent as X-Timeout: how long Jina waits for the page to load."),
  engine: z.enum(["browser", "direct", "cf-browser-rendering"]).optional().describe("Sent as X-Engine."),
  target_selector: z.string().min(1).optional().describe("CSS selector of the main content (X-Target-Selector)."),
  no_cache: z.boolean().default(false).describe("Bypass Jina's cache (X-No-Cache)."),
  retain_images: z
    .enum(["all", "none", "alt"])
    .default("none")
    .describe("X-Retain-Images: images cost tokens and are rarely useful to the model."),
  max_content_chars: z.number().int().min(200).default(200_000).describe("Cap on one page, before @antler/tools-web's fetch cap."),
});

export type JinaConfig = z.output<typeof jinaConfigSchema>;
export type JinaConfigInput = z.input<typeof jinaConfigSchema>;
