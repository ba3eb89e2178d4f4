import { capText, endpoint, ensureOk, type WebFetchResult, type WebSearchProvider } from "@antler/tools-web/provider";
import { z } from "zod";
import { JINA_API_KEY_ENV, type JinaConfig } from "./config.js";

export const JINA_PROVIDER = "jina";

// Jina Reader's JSON answer (with `Accept: application/json`).
const readerAnswerSchema = z.looseObject({
  code: z.number().optional(),
  data: z
    .looseObject({
      title: z.string().nullish(),
      description: z.string().nullish(),
      url: z.string().nullish(),
      content: z.string().nullish(),
      publishedTime: z.string().nullish(),
    })
    .nullish(),
  message: z.string().nullish(),
  readableMessage: z.string().nullish(),
});

export interface JinaProviderOptions {
  /** Where the key comes from when `api_key` is not configured. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** The Jina Reader provider: `POST {base_url}/` with `{ url }`, Markdown back as JSON. */
export function createJinaProvider(config: JinaConfig, options: JinaProviderOptions = {}): WebSearchProvider {
  const readerUrl = endpoint(config.base_url, "");
  return {
    name: JINA_PROVIDER,
    apiKeyEnv: JINA_API_KEY_ENV,
    async fetch(url, ctx): Promise<WebFetchResult> {
      const apiKey = config.api_key ?? (options.env ?? process.env)[JINA_API_KEY_ENV];
      const headers: Record<string, string> = {
        accept: "application/json",
        "content-type": "application/json",
        "x-return-format": "markdown",
        "x-timeout": String(config.timeout_seconds),
        "x-retain-images": config.retain_images,
      };
      if (apiKey) headers.authorization = `Bearer ${apiKey}`;
      if (config.engine) headers["x-engine"] = config.engine;
      if (config.target_selector) headers["x-target-selector"] = config.target_selector;
      if (config.no_cache) headers["x-no-cache"] = "true";
      const response = await ensureOk(
        JINA_PROVIDER,
        await (ctx.vendorFetch ?? fetch)(readerUrl, { method: "POST", headers, body: JSON.stringify({ url }), signal: ctx.signal }),
      );
      const text = await response.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        // A reader that ignores Accept answers plain Markdown; take it as is.
        return { url, content: capText(text, config.max_content_chars), format: "markdown" };
      }
      const parsed = readerAnswerSchema.safeParse(json);
      const data = parsed.success ? parsed.data.data : undefined;
      if (!data || typeof data.content !== "string") {
        const why = parsed.success ? (parsed.data.readableMessage ?? parsed.data.message) : undefined;
        throw new Error(`Jina Reader returned no content for ${url}${why ? `: ${why}` : ""}`);
      }
      return {
        url: data.url || url,
        title: data.title || undefined,
        content: capText(data.content, config.max_content_chars),
        format: "markdown",
      };
    },
  };
}
