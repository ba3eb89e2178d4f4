import { randomUUID } from "node:crypto";
import { type LoopbackReply, type LoopbackServer, type RecordedHttpRequest, startLoopbackServer } from "@antler/tools-web/testing";

/** Brave's error envelope, as its API sends it for auth failures and rate limits. */
export function braveError(status: number, code: string, detail: string, meta: Record<string, unknown> = {}): LoopbackReply {
  return {
    status,
    body: { type: "ErrorResponse", error: { id: randomUUID(), status, code, detail, meta }, time: Math.floor(Date.now() / 1000) },
  };
}

export const BRAVE_RATE_LIMITED: LoopbackReply = {
  ...braveError(429, "RATE_LIMITED", "Request rate limit exceeded for plan.", {
    plan: "Free",
    rate_limit: 1,
    rate_current: 2,
    quota_limit: 2000,
    quota_current: 17,
    component: "rate_limiter",
  }),
  // Brave states its windows (per second, per month) in X-RateLimit-* headers, not in Retry-After.
  headers: { "x-ratelimit-limit": "1, 2000", "x-ratelimit-remaining": "0, 1983", "x-ratelimit-reset": "1, 1419704" },
};

/** The monthly quota used up: the per-second window is fine, the monthly one resets in about 16 days. */
export const BRAVE_QUOTA_EXHAUSTED: LoopbackReply = {
  ...braveError(429, "RATE_LIMITED", "Request rate limit exceeded for plan.", { plan: "Free", quota_limit: 2000, quota_current: 2000 }),
  headers: { "x-ratelimit-limit": "1, 2000", "x-ratelimit-remaining": "1, 0", "x-ratelimit-reset": "1, 1419704" },
};

/** A web search answer shaped like Brave's `WebSearchApiResponse` (trimmed to two results plus noise). */
export function braveWebSearchBody(query: string): unknown {
  return {
    type: "search",
    query: {
      original: query,
      show_strict_warning: false,
      is_navigational: false,
      is_news_breaking: false,
      spellcheck_off: true,
      country: "us",
      bad_results: false,
      should_fallback: false,
      postal_code: "",
      city: "",
      header_country: "",
      more_results_available: true,
      state: "",
    },
    mixed: {
      type: "mixed",
      main: [
        { type: "web", index: 0, all: false },
        { type: "web", index: 1, all: false },
      ],
      top: [],
      side: [],
    },
    web: {
      type: "search",
      results: [
        {
          title: "Stream | Node.js v20.19.0 Documentation",
          url: "https://nodejs.org/api/stream.html",
          is_source_local: false,
          is_source_both: false,
          description:
            "A <strong>stream</strong> is an abstract interface for working with streaming data in <strong>Node.js</strong>. The <strong>node:stream</strong> module provides an API for implementing the stream interface. There are many stream objects provided by <strong>Node.js</strong>. For instance, a request to an HTTP server and process.stdout are both stream instances.",
          page_age: "2025-02-10T00:00:00",
          profile: {
            name: "Node.js",
            url: "https://nodejs.org/api/stream.html",
            long_name: "nodejs.org",
            img: "https://imgs.search.brave.com/a.png",
          },
          language: "en",
          family_friendly: true,
          type: "search_result",
          subtype: "generic",
          is_live: false,
          meta_url: {
            scheme: "https",
            netloc: "nodejs.org",
            hostname: "nodejs.org",
            favicon: "https://imgs.search.brave.com/f.png",
            path: "› api › stream.html",
          },
          age: "February 10, 2025",
          extra_snippets: [
            "Readable streams are an abstraction for a source from which data is consumed.",
            "Writable streams &amp; duplex streams.",
          ],
        },
        {
          title: "Node.js Streams: Everything you need to know &#x27;2024&#x27;",
          url: "https://www.freecodecamp.org/news/node-js-streams-everything-you-need-to-know-c9141306be93/",
          description:
            "Node.js streams have a reputation for being hard to work with, and even harder to understand. Well I&#x27;ve got good news for you &mdash; that&#x27;s no longer the case.",
          age: "June 8, 2017",
          language: "en",
          family_friendly: true,
          type: "search_result",
          subtype: "article",
          meta_url: { scheme: "https", netloc: "freecodecamp.org", hostname: "www.freecodecamp.org", path: "› news › node-js-streams" },
        },
        { title: "Broken entry without a URL", description: "dropped by the mapper" },
        { title: "A javascript: link", url: "javascript:alert(1)", description: "dropped: not http(s)" },
      ],
      family_friendly: true,
    },
  };
}

/** An image search answer shaped like Brave's `ImageSearchApiResponse`. */
export function braveImageSearchBody(query: string): unknown {
  return {
    type: "images",
    query: { original: query, spellcheck_off: true, show_strict_warning: false },
    results: [
      {
        type: "image_result",
        title: "Red fox in the snow - Wikimedia Commons",
        url: "https://commons.wikimedia.org/wiki/File:Vulpes_vulpes_snow.jpg",
        source: "commons.wikimedia.org",
        page_fetched: "2025-01-02T03:04:05Z",
        thumbnail: { src: "https://imgs.search.brave.com/thumb-fox.jpg", width: 500, height: 333 },
        properties: {
          url: "https://upload.wikimedia.org/wikipedia/commons/a/a1/Vulpes_vulpes_snow.jpg",
          placeholder: "https://imgs.search.brave.com/ph.jpg",
          width: 4000,
          height: 2667,
        },
        meta_url: { scheme: "https", netloc: "commons.wikimedia.org", hostname: "commons.wikimedia.org", path: "› wiki" },
        confidence: "high",
      },
      {
        type: "image_result",
        title: "",
        url: "https://example.org/foxes",
        source: "example.org",
        thumbnail: { src: "https://imgs.search.brave.com/thumb-2.jpg" },
        properties: { url: "https://example.org/img/fox.png" },
        confidence: "medium",
      },
      { type: "image_result", title: "no image url", url: "https://example.org/x", properties: {} },
    ],
    extra: { might_be_offensive: false },
  };
}

export interface FakeBrave extends LoopbackServer {
  /** Base URL to configure as `base_url`: `<url>/res/v1`. */
  readonly baseUrl: string;
  readonly calls: (path: string) => RecordedHttpRequest[];
}

/** A loopback Brave Search API: checks `X-Subscription-Token`, answers web and image searches. */
export async function startFakeBrave(validToken: string): Promise<FakeBrave> {
  const server = await startLoopbackServer((req) => {
    const token = req.headers["x-subscription-token"];
    if (token !== validToken) {
      return braveError(401, "SUBSCRIPTION_TOKEN_INVALID", "The provided subscription token is invalid.", { component: "authentication" });
    }
    const q = req.query.get("q");
    if (req.method !== "GET") return braveError(405, "METHOD_NOT_ALLOWED", "Only GET is supported.");
    if (!q)
      return braveError(422, "VALIDATION", "Unable to validate request parameter(s)", {
        errors: [{ loc: ["query", "q"], msg: "field required" }],
      });
    if (req.path === "/res/v1/web/search") return { status: 200, body: braveWebSearchBody(q) };
    if (req.path === "/res/v1/images/search") return { status: 200, body: braveImageSearchBody(q) };
    return braveError(404, "NOT_FOUND", `No route ${req.path}`);
  });
  return {
    ...server,
    baseUrl: `${server.url}/res/v1`,
    calls: (path) => server.requests.filter((r) => r.path === path),
  };
}
