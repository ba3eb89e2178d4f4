import { endpoint, readJson, requireApiKey, type WebSearchProvider, type WebSearchResult } from "@antler/tools-web/provider";
import { TENCENT_WSA_API_KEY_ENV, TENCENT_WSA_DEFAULT_COUNT, TENCENT_WSA_MAX_RESULTS, type TencentWsaConfig } from "./config.js";
import { mapTencentWsaResults } from "./mapping.js";

export const TENCENT_WSA_PROVIDER_NAME = "tencent-wsa";

export interface TencentWsaProviderOptions {
  /** Where `TENCENTCLOUD_WSA_APIKEY` is looked up. Default `process.env`, read at call time. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Config path named in errors. */
  readonly where?: string;
}

/**
 * The `Cnt` to send for `count` wanted results, or undefined. SearchPro answers 10 by default and takes `Cnt`
 * only as 10/20/30/40/50, on plans that support it: so up to 10 it is left out (any plan works), above 10 it is
 * the next multiple of 10, and never above 50.
 */
export function tencentCnt(count: number): number | undefined {
  if (count <= TENCENT_WSA_DEFAULT_COUNT) return undefined;
  return Math.min(TENCENT_WSA_MAX_RESULTS, Math.ceil(count / TENCENT_WSA_DEFAULT_COUNT) * TENCENT_WSA_DEFAULT_COUNT);
}

/** Tencent Cloud Web Search: `POST {base_url}/SearchPro` with `Authorization: Bearer <WSA API key>`. */
export function createTencentWsaProvider(config: TencentWsaConfig, options: TencentWsaProviderOptions = {}): WebSearchProvider {
  const apiKey = (): string =>
    requireApiKey({
      configured: config.api_key,
      envVar: TENCENT_WSA_API_KEY_ENV,
      env: options.env,
      vendor: "Tencent Cloud Web Search",
      where: options.where ?? "plugins[@antler/tools-tencent-wsa].config.api_key",
      keyPage: "the Tencent Cloud WSA console, https://console.cloud.tencent.com/wsa",
    });

  return {
    name: TENCENT_WSA_PROVIDER_NAME,
    apiKeyEnv: TENCENT_WSA_API_KEY_ENV,

    async search(query, { maxResults }, ctx): Promise<WebSearchResult[]> {
      const count = Math.max(1, Math.min(maxResults, config.max_results, TENCENT_WSA_MAX_RESULTS));
      const body: Record<string, unknown> = { Query: query };
      if (config.mode !== undefined) body.Mode = config.mode;
      if (config.site) body.Site = config.site;
      const cnt = tencentCnt(count);
      if (cnt !== undefined) body.Cnt = cnt;
      if (config.industry) body.Industry = config.industry;
      const response = await (ctx.vendorFetch ?? ctx.fetch)(endpoint(config.base_url, "SearchPro"), {
        method: "POST",
        headers: {
          authorization: `Bearer ${apiKey()}`,
          "content-type": "application/json; charset=utf-8",
          accept: "application/json",
        },
        body: JSON.stringify(body),
        signal: ctx.signal,
      });
      // Options only premium plans take are the likely cause of a refusal, so the message says which were sent.
      const premium = [cnt !== undefined ? `Cnt=${cnt}` : "", config.industry ? `Industry=${config.industry}` : ""].filter(Boolean);
      const hint = premium.length
        ? `; the request used ${premium.join(" and ")}, which needs a Tencent Cloud plan that supports it (lower max_results to 10${config.industry ? " or drop industry" : ""} otherwise)`
        : "";
      return mapTencentWsaResults(
        await readJson(TENCENT_WSA_PROVIDER_NAME, response),
        { maxResults: count, maxSnippetChars: config.max_snippet_chars, maxTitleChars: config.max_title_chars },
        hint,
      );
    },
  };
}
