import { type LoopbackReply, type LoopbackServer, type RecordedHttpRequest, startLoopbackServer } from "@antler/tools-web/testing";

const esc = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export interface FakeResult {
  readonly url: string;
  /** HTML, as DuckDuckGo marks query terms with <b>. */
  readonly titleHtml: string;
  readonly snippetHtml: string;
  readonly timestamp?: string;
}

const redirect = (target: string): string => `//duckduckgo.com/l/?uddg=${encodeURIComponent(target)}&amp;rut=8f1c2a${target.length}e`;

function resultBlock(r: FakeResult): string {
  const href = redirect(r.url);
  const display = r.url.replace(/^https?:\/\//, "").replace(/\/$/, "");
  return `
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="${href}">${r.titleHtml}</a>
      </h2>
      <div class="result__extras">
        <div class="result__extras__url">
          <span class="result__icon"><a rel="nofollow" href="${href}"><img class="result__icon__img" width="16" height="16" alt="" src="//external-content.duckduckgo.com/ip3/${esc(new URL(r.url).hostname)}.ico" name="i15" /></a></span>
          <a class="result__url" href="${href}">${esc(display)}</a>
          ${r.timestamp ? `<span>&nbsp; &nbsp;</span><span class="result__timestamp">${esc(r.timestamp)}</span>` : ""}
        </div>
      </div>
      <a class="result__snippet" href="${href}">${r.snippetHtml}</a>
      <div class="clear"></div>
    </div>
  </div>`;
}

const AD_BLOCK = `
  <div class="result results_links results_links_deep result--ad ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=shop.example&amp;ad_provider=bingv7aa&amp;u3=https%3A%2F%2Fwww.bing.com%2Faclick">Buy Rust Books - Free Shipping</a></h2>
      <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=shop.example">Sponsored result.</a>
      <div class="badge--ad">Ad</div>
    </div>
  </div>`;

function navForm(label: "Next" | "Previous", q: string, s: number, vqd: string): string {
  return `
  <div class="nav-link">
    <form action="/html/" method="post">
      <input type="submit" class='btn btn--alt' value="${label}" />
      <input type="hidden" name="q" value="${esc(q)}" />
      <input type="hidden" name="s" value="${s}" />
      <input type="hidden" name="nextParams" value="" />
      <input type="hidden" name="v" value="l" />
      <input type="hidden" name="o" value="json" />
      <input type="hidden" name="dc" value="${s + 1}" />
      <input type="hidden" name="api" value="d.js" />
      <input type="hidden" name="vqd" value="${vqd}" />
      <input name="kl" value="wt-wt" type="hidden" />
    </form>
  </div>`;
}

function page(q: string, body: string): string {
  return `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
  <meta http-equiv="content-type" content="text/html; charset=UTF-8" />
  <meta name="referrer" content="origin" />
  <title>${esc(q)} at DuckDuckGo</title>
  <link rel="stylesheet" href="/dist/h.9e8f5c.css" type="text/css" />
</head>
<body>
  <div class="header">
    <form name="x" class="header__form" action="/html/" method="post">
      <input name="q" autocomplete="off" class="search__input" id="search_form_input_homepage" type="text" value="${esc(q)}" />
      <input name="b" id="search_button_homepage" class="search__button search__button--html" value="" title="Search" alt="Search" type="submit" />
      <select class="frm__select" name="kl"><option value="" >All Regions</option><option value="us-en">US (English)</option></select>
    </form>
  </div>
  <div>
  <div class="serp__results">
  <div id="links" class="results">
${body}
  </div>
  </div>
  </div>
</body>
</html>`;
}

export const VQD = "4-156203714941817264927311204880357823042";

export const PAGE_ONE_RESULTS: readonly FakeResult[] = [
  {
    url: "https://www.rust-lang.org/",
    titleHtml: "<b>Rust</b> Programming Language",
    snippetHtml:
      "A language empowering everyone to build reliable and efficient software. <b>Rust</b> is blazingly fast &amp; memory-efficient: with no runtime or garbage collector.",
  },
  {
    url: "https://doc.rust-lang.org/book/",
    titleHtml: "The <b>Rust</b> Programming Language - The <b>Rust</b> Programming Language",
    snippetHtml: "This version of the text assumes you&#x27;re using <b>Rust</b> 1.85.0 (released 2025-02-17) or later.",
    timestamp: "2025-02-20T00:00:00.0000000",
  },
  {
    url: "https://en.wikipedia.org/wiki/Rust_(programming_language)",
    titleHtml: "<b>Rust</b> (programming language) - Wikipedia",
    snippetHtml: "<b>Rust</b> is a general-purpose programming language emphasizing performance, type safety, and concurrency.",
  },
];

export const PAGE_TWO_RESULTS: readonly FakeResult[] = [
  {
    url: "https://github.com/rust-lang/rust",
    titleHtml: "GitHub - rust-lang/<b>rust</b>: Empowering everyone to build reliable and efficient software.",
    snippetHtml: "This is the main source code repository for <b>Rust</b>. It contains the compiler, standard library, and documentation.",
  },
  // Repeated from page one: the provider must not return it twice.
  PAGE_ONE_RESULTS[0] as FakeResult,
  {
    url: "https://blog.rust-lang.org/",
    titleHtml: "<b>Rust</b> Blog",
    snippetHtml: "Empowering everyone to build reliable and efficient software.",
  },
];

export function pageOneHtml(q: string): string {
  return page(q, AD_BLOCK + PAGE_ONE_RESULTS.map(resultBlock).join("") + navForm("Next", q, 10, VQD));
}

export function pageTwoHtml(q: string): string {
  return page(q, PAGE_TWO_RESULTS.map(resultBlock).join("") + navForm("Previous", q, 0, VQD));
}

export function noResultsHtml(q: string): string {
  return page(q, `<div class="result results_links_deep result--no-result"><div class="no-results">No results.</div></div>`);
}

/** The page DuckDuckGo serves, with HTTP 202, when it suspects a bot. */
export function challengeHtml(): string {
  return `<!DOCTYPE html><html><head><title>DuckDuckGo</title></head><body>
  <div class="anomaly-modal__mask"><div class="anomaly-modal__modal" data-testid="anomaly-modal">
    <div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>
    <div class="anomaly-modal__description">Please complete the following challenge to confirm this search was made by a human.</div>
    <form id="challenge-form" action="//duckduckgo.com/anomaly.js?sv=html&amp;cc=sre&amp;ti=1" method="POST"><div class="anomaly-modal__puzzle"></div></form>
  </div></div></body></html>`;
}

export const CHALLENGE_REPLY: LoopbackReply = {
  status: 202,
  body: challengeHtml(),
  headers: { "content-type": "text/html; charset=UTF-8" },
};

const html = (body: string): LoopbackReply => ({ status: 200, body, headers: { "content-type": "text/html; charset=UTF-8" } });

export interface FakeDuckDuckGo extends LoopbackServer {
  readonly forms: () => URLSearchParams[];
}

/** A loopback `html.duckduckgo.com`: POST /html/ with a form body; page two needs page one's `s` and `vqd`. */
export async function startFakeDuckDuckGo(): Promise<FakeDuckDuckGo> {
  const server = await startLoopbackServer((req: RecordedHttpRequest) => {
    if (req.path !== "/html/") return { status: 404, body: "Not Found" };
    if (req.method !== "POST") return { status: 405, body: "Method Not Allowed" };
    if (!String(req.headers["content-type"]).startsWith("application/x-www-form-urlencoded")) return { status: 400, body: "Bad Request" };
    const form = new URLSearchParams(req.text);
    const q = form.get("q") ?? "";
    if (q === "") return html(page("", ""));
    if (q.includes("zzqqxx")) return html(noResultsHtml(q));
    const s = form.get("s");
    if (s === null) return html(pageOneHtml(q));
    if (s === "10" && form.get("vqd") === VQD) return html(pageTwoHtml(q));
    return { status: 400, body: "Bad Request" };
  });
  return { ...server, forms: () => server.requests.map((r) => new URLSearchParams(r.text)) };
}
