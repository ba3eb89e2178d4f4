import { capText, type WebSearchResult } from "@antler/tools-web/provider";
import { parseHTML } from "linkedom";

/** One parsed results page of the HTML endpoint. */
export interface DuckDuckGoPage {
  readonly results: WebSearchResult[];
  /** The hidden fields of the "Next" form, to POST for the following page; absent on the last page. */
  readonly next?: URLSearchParams | undefined;
  /** DuckDuckGo served its bot challenge ("anomaly" page) instead of results. */
  readonly challenged: boolean;
}

export interface DuckDuckGoParseCaps {
  readonly maxSnippetChars: number;
  readonly maxTitleChars: number;
}

const clean = (text: string | null | undefined): string => (text ?? "").replace(/\s+/g, " ").trim();

/**
 * The target of a result link. Organic links go through DuckDuckGo's redirector
 * (`//duckduckgo.com/l/?uddg=<encoded target>&rut=...`); the target is decoded from `uddg` so the model gets the
 * real page. Ad links (`/y.js?ad_domain=...`) and any other link back into DuckDuckGo give `undefined`.
 */
export function resolveResultHref(href: string | null | undefined): string | undefined {
  if (!href) return undefined;
  let url: URL;
  try {
    url = new URL(href, "https://duckduckgo.com/");
  } catch {
    return undefined;
  }
  const onDuckDuckGo = url.hostname === "duckduckgo.com" || url.hostname.endsWith(".duckduckgo.com");
  if (onDuckDuckGo && url.pathname === "/l/") {
    const target = url.searchParams.get("uddg");
    return target ? resolveResultHref(target) : undefined;
  }
  if (onDuckDuckGo) return undefined;
  return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
}

/** Parses a results page of `POST /html/`. Ads, the "No results." placeholder and redirector-less links are left out. */
export function parseDuckDuckGoHtml(html: string, caps: DuckDuckGoParseCaps): DuckDuckGoPage {
  const { document } = parseHTML(html);
  const challenged = document.querySelector("#challenge-form, .anomaly-modal, .anomaly-modal__title, form[action*='anomaly']") !== null;
  const results: WebSearchResult[] = [];
  const seen = new Set<string>();
  for (const node of document.querySelectorAll("div.result")) {
    const classes = node.classList;
    if (classes.contains("result--ad") || classes.contains("result--no-result")) continue;
    const anchor = node.querySelector("a.result__a");
    const url = resolveResultHref(anchor?.getAttribute("href"));
    if (!anchor || !url || seen.has(url)) continue;
    seen.add(url);
    const title = clean(anchor.textContent);
    const snippet = clean(node.querySelector(".result__snippet")?.textContent);
    const timestamp = clean(node.querySelector(".result__timestamp")?.textContent);
    results.push({
      title: capText(title || url, caps.maxTitleChars),
      url,
      snippet: capText(snippet, caps.maxSnippetChars),
      publishedAt: timestamp || undefined,
    });
  }
  let next: URLSearchParams | undefined;
  for (const form of document.querySelectorAll(".nav-link form")) {
    const submit = form.querySelector("input[type='submit']");
    if (clean(submit?.getAttribute("value")).toLowerCase() !== "next") continue;
    next = new URLSearchParams();
    for (const input of form.querySelectorAll("input[type='hidden'][name]")) {
      next.append(input.getAttribute("name") ?? "", input.getAttribute("value") ?? "");
    }
  }
  return { results, next, challenged };
}
