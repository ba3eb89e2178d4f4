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

/** How the fake image results page carries the `vqd` token. */
export type VqdShape = "quoted" | "single-quoted" | "url" | "json" | "none";

export const IMAGES_VQD = "4-297713506512874307418356025178233950419";

/**
 * DuckDuckGo's image results page (`/?q=…&iax=images&ia=images`), reduced to what matters: the `vqd` token in
 * one of the shapes the live page has used, inside the head's script. "none" is a page without it.
 */
export function imagesPageHtml(q: string, shape: VqdShape, vqd = IMAGES_VQD): string {
  const enc = encodeURIComponent(q);
  const token: Record<VqdShape, string> = {
    quoted: `<script type="text/javascript">DDG.page = new DDG.Pages.SERP({ showSafeSearch: 0 });vqd="${vqd}";</script>`,
    "single-quoted": `<script>window.vqd='${vqd}';DDG.ready(function(){});</script>`,
    url: `<script>DDG.deep.initialize('/d.js?q=${enc}&amp;l=wt-wt&amp;s=0&amp;dl=en&amp;ct=US&amp;vqd=${vqd}&amp;p_ent=&amp;ex=-1&amp;sp=0', true);</script>`,
    json: `<script id="__data" type="application/json">{"query":${JSON.stringify(q)},"vqd":"${vqd}","ia":"images"}</script>`,
    none: `<script>DDG.page = new DDG.Pages.SERP({ showSafeSearch: 0 });</script>`,
  };
  return `<!DOCTYPE html><html lang="en-US" class="no-js has-zcm"><head>
<meta http-equiv="content-type" content="text/html; charset=utf-8"><title>${esc(q)} at DuckDuckGo</title>
<link rel="preload" href="/dist/lib/l.8d3d2cdb7a0b5c8e6d6b.js" as="script">
${token[shape]}
</head><body class="body--serp"><input id="search_form_input" type="text" name="q" value="${esc(q)}"><div id="zero_click_wrapper"></div><div class="results--main"></div></body></html>`;
}

/** One entry of `i.js`'s `results`, as DuckDuckGo sends it (Bing-proxied thumbnails, tokens, `source: "Bing"`). */
export interface FakeImage {
  readonly title: string;
  readonly image: string;
  readonly thumbnail: string;
  readonly url: string;
  readonly width: number;
  readonly height: number;
}

export const LONG_IMAGE_TITLE = `Red fox (Vulpes vulpes) ${"standing in fresh powder snow at the edge of a birch forest in the early morning light, ".repeat(4)}photographed in Finland`;

export const FAKE_IMAGES: readonly FakeImage[] = [
  {
    title: "Red fox - Wikipedia",
    image: "https://upload.wikimedia.org/wikipedia/commons/1/16/Red_fox_%28Vulpes_vulpes%29.jpg",
    thumbnail: "https://tse2.mm.bing.net/th?id=OIP.Xb1q9c0r6Rk2yEo0&pid=Api",
    url: "https://en.wikipedia.org/wiki/Red_fox",
    width: 2048,
    height: 1365,
  },
  {
    // A data: URL is not an image on the web: dropped.
    title: "Fox icon",
    image: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    thumbnail: "https://tse1.mm.bing.net/th?id=OIP.icon&pid=Api",
    url: "https://icons.example.com/fox",
    width: 64,
    height: 64,
  },
  {
    title: LONG_IMAGE_TITLE,
    image: "http://photos.example.org/fox/winter-fox.jpg",
    // Protocol-relative, as DuckDuckGo's image proxy writes it.
    thumbnail: "//external-content.duckduckgo.com/iu/?u=http%3A%2F%2Fphotos.example.org%2Ffox%2Fwinter-fox.jpg&f=1",
    url: "https://photos.example.org/fox/winter",
    width: 1600,
    height: 1067,
  },
  {
    title: "Red Fox | National Geographic",
    image: "https://i.natgeofe.com/n/2f6c2e9b/red-fox.jpg",
    thumbnail: "https://tse3.mm.bing.net/th?id=OIP.natgeo&pid=Api",
    url: "https://www.nationalgeographic.com/animals/mammals/facts/red-fox",
    width: 3072,
    height: 2048,
  },
  {
    // The same picture again, on another page: returned once.
    title: "Red fox (Wikimedia Commons)",
    image: "https://upload.wikimedia.org/wikipedia/commons/1/16/Red_fox_%28Vulpes_vulpes%29.jpg",
    thumbnail: "https://tse2.mm.bing.net/th?id=OIP.Xb1q9c0r6Rk2yEo0&pid=Api",
    url: "https://commons.wikimedia.org/wiki/File:Red_fox.jpg",
    width: 2048,
    height: 1365,
  },
  {
    title: "Fox cub",
    image: "https://images.example.net/fox-cub.jpg",
    thumbnail: "https://tse4.mm.bing.net/th?id=OIP.cub&pid=Api",
    url: "https://images.example.net/gallery/fox-cub",
    width: 1200,
    height: 800,
  },
];

/** The JSON of `GET /i.js`, in DuckDuckGo's shape. */
export function imagesJson(q: string, vqd: string, images: readonly FakeImage[] = FAKE_IMAGES): Record<string, unknown> {
  const enc = encodeURIComponent(q);
  return {
    ads: null,
    next: `i.js?q=${enc}&o=json&p=1&s=100&u=bing&f=,,,,,&l=wt-wt&vqd=${vqd}`,
    query: q,
    queryEncoded: enc,
    response_type: "places",
    results: images.map((i, n) => ({
      height: i.height,
      image: i.image,
      image_token: `c0ffee${n}`,
      source: "Bing",
      thumbnail: i.thumbnail,
      thumbnail_token: `beef${n}`,
      title: i.title,
      url: i.url,
      width: i.width,
    })),
    vqd: { [enc]: vqd },
  };
}

export interface FakeDuckDuckGo extends LoopbackServer {
  readonly forms: () => URLSearchParams[];
  /** How the image results page carries its `vqd` from now on (default "quoted"). */
  vqdShape: VqdShape;
  /** Answers the next requests to `path` with these replies, in order, before the normal handler. */
  queueFor(path: string, ...replies: LoopbackReply[]): void;
  /** Forgets the replies `queueFor` holds, the image page shape and the requests seen (between tests). */
  reset(): void;
}

/**
 * A loopback DuckDuckGo. `html.duckduckgo.com`: POST /html/ with a form body; page two needs page one's `s` and
 * `vqd`. `duckduckgo.com`: GET / (the image results page with the query's `vqd`) and GET /i.js, which answers
 * only with that `vqd`, the query and `o=json`, the way the live endpoint refuses a request without them (403).
 */
export async function startFakeDuckDuckGo(): Promise<FakeDuckDuckGo> {
  const perPath = new Map<string, LoopbackReply[]>();
  const fake = { vqdShape: "quoted" as VqdShape };
  const server = await startLoopbackServer((req: RecordedHttpRequest) => {
    const queued = perPath.get(req.path)?.shift();
    if (queued) return queued;
    if (req.path === "/" && req.method === "GET") {
      const q = req.query.get("q") ?? "";
      if (q === "" || req.query.get("ia") !== "images") return html(page("", ""));
      return html(imagesPageHtml(q, fake.vqdShape));
    }
    if (req.path === "/i.js" && req.method === "GET") {
      const q = req.query.get("q") ?? "";
      if (req.query.get("vqd") !== IMAGES_VQD || q === "" || req.query.get("o") !== "json") {
        return { status: 403, body: "Forbidden", headers: { "content-type": "text/plain" } };
      }
      return { status: 200, body: imagesJson(q, IMAGES_VQD), headers: { "content-type": "application/json; charset=UTF-8" } };
    }
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
  return Object.assign(fake, server, {
    forms: () => server.requests.map((r) => new URLSearchParams(r.text)),
    queueFor(path: string, ...replies: LoopbackReply[]) {
      perPath.set(path, [...(perPath.get(path) ?? []), ...replies]);
    },
    reset() {
      perPath.clear();
      fake.vqdShape = "quoted";
      server.requests.length = 0;
    },
  });
}
