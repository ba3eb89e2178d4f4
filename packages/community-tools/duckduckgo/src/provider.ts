import {
  endpoint,
  ensureOk,
  type ImageSearchResult,
  readJson,
  type WebCallContext,
  WebProviderHttpError,
  type WebSearchProvider,
  type WebSearchResult,
} from "@antler/tools-web/provider";
import type { DuckDuckGoConfig } from "./config.js";
import { extractVqd, isChallengePage, mapDuckDuckGoImages } from "./images.js";

export const DUCKDUCKGO_PROVIDER_NAME = "duckduckgo";

const SAFESEARCH: Readonly<Record<DuckDuckGoConfig["safesearch"], string>> = { strict: "1", moderate: "-1", off: "-2" };
/** `i.js` knows only on (`1`) and off (`-1`); moderate filters, so it is on. */
const IMAGE_SAFESEARCH: Readonly<Record<DuckDuckGoConfig["safesearch"], string>> = { strict: "1", moderate: "1", off: "-1" };
const TIME_RANGE: Readonly<Record<NonNullable<DuckDuckGoConfig["time_range"]>, string>> = { day: "d", week: "w", month: "m", year: "y" };

/** What image_search tells the model when DuckDuckGo refuses a scripted client: not retryable, so name a way out. */
export const DUCKDUCKGO_REFUSAL_ADVICE =
  "DuckDuckGo refused the automated request (its bot protection blocks scripted image searches). Use another image provider: set plugins[@antler/tools-web].config.images to brave, serper, tavily or searxng";

/**
 * DuckDuckGo's image page came back without the `vqd` token `i.js` needs: the page was a refusal, or DuckDuckGo
 * changed it. Not retried (the next try gets the same page).
 */
export class DuckDuckGoRefusalError extends Error {
  constructor(readonly reason: string) {
    super(`${DUCKDUCKGO_REFUSAL_ADVICE} (${reason})`);
    this.name = "DuckDuckGoRefusalError";
  }
}

/** A 403 or 418 is how DuckDuckGo turns a client away (a bad or expired `vqd` gets a 403 from `i.js` too). */
async function ensureNotRefused(response: Response): Promise<Response> {
  if (response.status !== 403 && response.status !== 418) return ensureOk(DUCKDUCKGO_PROVIDER_NAME, response);
  await response.body?.cancel().catch(() => {});
  throw new WebProviderHttpError(DUCKDUCKGO_PROVIDER_NAME, response.status, DUCKDUCKGO_REFUSAL_ADVICE);
}

/**
 * DuckDuckGo without a key. Search: a form `POST {base_url}/html/` (the page a browser without JavaScript gets),
 * parsed with linkedom; further pages are fetched by posting the page's own "Next" form, up to `max_pages`.
 * Images: the way DuckDuckGo's own image page works, `GET {images_base_url}/?q=…&iax=images&ia=images` for the
 * query's `vqd` token, then `GET {images_base_url}/i.js?l=…&o=json&q=…&vqd=…&f=…&p=…` for the results as JSON.
 */
export function createDuckDuckGoProvider(config: DuckDuckGoConfig): WebSearchProvider {
  const url = endpoint(config.base_url, "html/");
  const imagesHome = endpoint(config.images_base_url, "");

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
        // linkedom loads with the first results page, not with the plugin entry.
        const { parseDuckDuckGoHtml } = await import("./parse.js");
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

    async images(query, { maxResults }, ctx): Promise<ImageSearchResult[]> {
      const wanted = Math.max(1, Math.min(maxResults, config.max_results));
      const fetchVendor = ctx.vendorFetch ?? ctx.fetch;
      const pageUrl = `${imagesHome}?${new URLSearchParams({ q: query, iax: "images", ia: "images" })}`;
      const pageResponse = await fetchVendor(pageUrl, {
        headers: {
          accept: "text/html,application/xhtml+xml",
          "accept-language": "en-US,en;q=0.8",
          "user-agent": config.user_agent,
          referer: imagesHome,
          "sec-fetch-dest": "document",
          "sec-fetch-mode": "navigate",
        },
        signal: ctx.signal,
      });
      await ensureNotRefused(pageResponse);
      const page = await pageResponse.text();
      const vqd = extractVqd(page);
      if (!vqd) {
        if (isChallengePage(page)) {
          // As for web_search: the challenge is DuckDuckGo's rate limit, so the tool layer backs off and retries.
          throw new WebProviderHttpError(
            DUCKDUCKGO_PROVIDER_NAME,
            429,
            "DuckDuckGo served its bot challenge instead of the image page (rate limited); wait before searching again",
          );
        }
        throw new DuckDuckGoRefusalError("its image page carried no vqd token");
      }

      const time = config.time_range ? `time:${config.time_range}` : "";
      const params = new URLSearchParams({
        l: config.region,
        o: "json",
        q: query,
        vqd,
        // Six comma-separated filters: time, size, color, type, layout, license.
        f: `${time},,,,,`,
        p: IMAGE_SAFESEARCH[config.safesearch],
      });
      const response = await fetchVendor(`${endpoint(config.images_base_url, "i.js")}?${params}`, {
        headers: {
          accept: "application/json, text/javascript, */*; q=0.01",
          "accept-language": "en-US,en;q=0.8",
          "user-agent": config.user_agent,
          // The image results page is where a browser's script calls i.js from.
          referer: pageUrl,
          "x-requested-with": "XMLHttpRequest",
          "sec-fetch-dest": "empty",
          "sec-fetch-mode": "cors",
          "sec-fetch-site": "same-origin",
        },
        signal: ctx.signal,
      });
      await ensureNotRefused(response);
      return mapDuckDuckGoImages(await readJson(DUCKDUCKGO_PROVIDER_NAME, response), {
        maxResults: wanted,
        maxTitleChars: config.max_title_chars,
      });
    },
  };
}
