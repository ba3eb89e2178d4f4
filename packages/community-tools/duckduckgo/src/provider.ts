import {
  endpoint,
  ensureOk,
  type WebCallContext,
  WebProviderHttpError,
  type WebSearchProvider,
  type WebSearchResult,
} from "@antler/tools-web";
import type { DuckDuckGoConfig } from "./config.js";
import { parseDuckDuckGoHtml } from "./parse.js";

export const DUCKDUCKGO_PROVIDER_NAME = "duckduckgo";

const SAFESEARCH: Readonly<Record<DuckDuckGoConfig["safesearch"], string>> = { strict: "1", moderate: "-1", off: "-2" };
const TIME_RANGE: Readonly<Record<NonNullable<DuckDuckGoConfig["time_range"]>, string>> = { day: "d", week: "w", month: "m", year: "y" };

/**
 * DuckDuckGo without a key: a form `POST {base_url}/html/` (the page a browser without JavaScript gets), parsed
 * with linkedom. Further pages are fetched by posting the page's own "Next" form, up to `max_pages`.
 */
export function createDuckDuckGoProvider(config: DuckDuckGoConfig): WebSearchProvider {
  const url = endpoint(config.base_url, "html/");

  const postPage = async (form: URLSearchParams, ctx: WebCallContext): Promise<string> => {
    // The vendor's API at the configured base URL: operator configuration, so `vendorFetch` (trace id, signal, no
    // SSRF screening). Without it, the guarded fetch is the safe fallback.
    const response = await (ctx.vendorFetch ?? ctx.fetch)(url, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        accept: "text/html,application/xhtml+xml",
        "accept-language": "en-US,en;q=0.8",
        "user-agent": config.user_agent,
        referer: endpoint(config.base_url, ""),
      },
      body: form.toString(),
      signal: ctx.signal,
    });
    await ensureOk(DUCKDUCKGO_PROVIDER_NAME, response);
    return response.text();
  };

  return {
    name: DUCKDUCKGO_PROVIDER_NAME,

    async search(query, { maxResults }, ctx): Promise<WebSearchResult[]> {
      const wanted = Math.max(1, Math.min(maxResults, config.max_results));
      const first = new URLSearchParams({ q: query, b: "", kl: config.region, kp: SAFESEARCH[config.safesearch] });
      if (config.time_range) first.set("df", TIME_RANGE[config.time_range]);
      const out: WebSearchResult[] = [];
      const seen = new Set<string>();
      let form: URLSearchParams | undefined = first;
      for (let page = 0; form && page < config.max_pages && out.length < wanted; page += 1) {
        const parsed = parseDuckDuckGoHtml(await postPage(form, ctx), {
          maxSnippetChars: config.max_snippet_chars,
          maxTitleChars: config.max_title_chars,
        });
        if (parsed.challenged) {
          // DuckDuckGo's answer to too many requests is a challenge page (often with HTTP 202), not a 429.
          // Reported as one, so the tool layer backs off and retries like any other rate limit.
          throw new WebProviderHttpError(
            DUCKDUCKGO_PROVIDER_NAME,
            429,
            "DuckDuckGo served its bot challenge instead of results (rate limited); wait before searching again",
          );
        }
        for (const result of parsed.results) {
          if (out.length >= wanted || seen.has(result.url)) continue;
          seen.add(result.url);
          out.push(result);
        }
        form = parsed.next;
      }
      return out;
    },
  };
}
