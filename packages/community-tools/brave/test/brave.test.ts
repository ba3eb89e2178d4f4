import { isAntlerError } from "@antler/kernel";
import { type WebCallContext, WebProviderHttpError } from "@antler/tools-web";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { braveConfigSchema, braveRateLimitWait, createBraveProvider, mapBraveImageResults, mapBraveWebResults } from "../src/index.js";
import {
  BRAVE_QUOTA_EXHAUSTED,
  BRAVE_RATE_LIMITED,
  braveImageSearchBody,
  braveWebSearchBody,
  type FakeBrave,
  startFakeBrave,
} from "./fake-brave.js";

const TOKEN = "BSA-test-token-123";

function callContext(signal: AbortSignal = new AbortController().signal): WebCallContext {
  return { fetch: globalThis.fetch, signal, traceId: "trace-brave-test" };
}

describe("Brave mapping", () => {
  it("maps web results to plain text, drops unusable entries and caps the snippet", () => {
    const results = mapBraveWebResults(braveWebSearchBody("node streams"), { maxResults: 10, maxSnippetChars: 120, maxTitleChars: 200 });
    expect(results.map((r) => r.url)).toEqual([
      "https://nodejs.org/api/stream.html",
      "https://www.freecodecamp.org/news/node-js-streams-everything-you-need-to-know-c9141306be93/",
    ]);
    expect(results[0]?.title).toBe("Stream | Node.js v20.19.0 Documentation");
    expect(results[0]?.snippet).not.toContain("<strong>");
    expect(results[0]?.snippet.startsWith("A stream is an abstract interface")).toBe(true);
    expect(results[0]?.snippet.length).toBeLessThanOrEqual(120);
    expect(results[0]?.snippet.endsWith("…")).toBe(true);
    expect(results[0]?.publishedAt).toBe("2025-02-10T00:00:00");
    expect(results[1]?.title).toBe("Node.js Streams: Everything you need to know '2024'");
    expect(results[1]?.snippet).toContain("Well I've got good news");
    const [, uncapped] = mapBraveWebResults(braveWebSearchBody("q"), { maxResults: 10, maxSnippetChars: 2000, maxTitleChars: 200 });
    expect(uncapped?.snippet).toContain("I've got good news for you — that's no longer the case.");
    expect(results[1]?.publishedAt).toBe("June 8, 2017");
  });

  it("appends extra snippets only when asked", () => {
    const caps = { maxResults: 1, maxSnippetChars: 2000, maxTitleChars: 200 };
    const [plain] = mapBraveWebResults(braveWebSearchBody("q"), caps);
    const [extra] = mapBraveWebResults(braveWebSearchBody("q"), { ...caps, extraSnippets: true });
    expect(plain?.snippet).not.toContain("Readable streams");
    expect(extra?.snippet).toContain("… Readable streams are an abstraction");
    expect(extra?.snippet).toContain("Writable streams & duplex streams.");
  });

  it("reads an answer without a web section as no results", () => {
    expect(
      mapBraveWebResults({ type: "search", query: { original: "x" } }, { maxResults: 5, maxSnippetChars: 100, maxTitleChars: 100 }),
    ).toEqual([]);
  });

  it("rejects an answer that is not a search response with the reason", () => {
    expect(() => mapBraveWebResults({ type: "images", results: [] }, { maxResults: 5, maxSnippetChars: 100, maxTitleChars: 100 })).toThrow(
      /unexpected web search shape/,
    );
  });

  it("maps image results: properties.url is the image, url the page, title falls back to the source", () => {
    const images = mapBraveImageResults(braveImageSearchBody("fox"), { maxResults: 10, maxTitleChars: 200 });
    expect(images).toEqual([
      {
        title: "Red fox in the snow - Wikimedia Commons",
        imageUrl: "https://upload.wikimedia.org/wikipedia/commons/a/a1/Vulpes_vulpes_snow.jpg",
        thumbnailUrl: "https://imgs.search.brave.com/thumb-fox.jpg",
        sourceUrl: "https://commons.wikimedia.org/wiki/File:Vulpes_vulpes_snow.jpg",
        width: 4000,
        height: 2667,
      },
      {
        title: "example.org",
        imageUrl: "https://example.org/img/fox.png",
        thumbnailUrl: "https://imgs.search.brave.com/thumb-2.jpg",
        sourceUrl: "https://example.org/foxes",
        width: undefined,
        height: undefined,
      },
    ]);
  });
});

describe("Brave rate-limit headers", () => {
  it("picks the reset of the exhausted window, the longest when several are, else the first", () => {
    const wait = (remaining: string | null, reset: string | null) =>
      braveRateLimitWait(
        new Headers(
          Object.entries({ "x-ratelimit-remaining": remaining, "x-ratelimit-reset": reset }).filter(
            (e): e is [string, string] => e[1] !== null,
          ),
        ),
      );
    expect(wait("0, 1983", "1, 1419704")).toBe(1);
    expect(wait("3, 0", "1, 1419704")).toBe(1419704);
    expect(wait("0, 0", "1, 1419704")).toBe(1419704);
    expect(wait(null, "2, 99")).toBe(2);
    expect(wait("0", null)).toBeUndefined();
    expect(wait("0", "soon")).toBeUndefined();
  });
});

describe("Brave provider against a loopback Brave API", () => {
  let brave: FakeBrave;
  beforeAll(async () => {
    brave = await startFakeBrave(TOKEN);
  });
  afterAll(() => brave.close());
  beforeEach(() => {
    brave.requests.length = 0;
  });

  const provider = (overrides: Record<string, unknown> = {}, env: Record<string, string | undefined> = { BRAVE_SEARCH_API_KEY: TOKEN }) =>
    createBraveProvider(braveConfigSchema.parse({ base_url: brave.baseUrl, ...overrides }), { env });

  it("sends GET /res/v1/web/search with the subscription token, q, count and filters", async () => {
    const results = await provider({ country: "DE", search_lang: "de", safesearch: "strict" }).search!(
      "node streams",
      { maxResults: 3 },
      callContext(),
    );
    expect(results).toHaveLength(2);
    const [req] = brave.requests;
    expect(req?.method).toBe("GET");
    expect(req?.path).toBe("/res/v1/web/search");
    expect(req?.headers["x-subscription-token"]).toBe(TOKEN);
    expect(req?.headers.accept).toBe("application/json");
    expect(Object.fromEntries(req?.query ?? [])).toEqual({
      q: "node streams",
      count: "3",
      safesearch: "strict",
      country: "DE",
      search_lang: "de",
      text_decorations: "false",
      result_filter: "web",
    });
  });

  it("clamps count to the config's max_results and to Brave's ceiling of 20", async () => {
    await provider({ max_results: 4 }).search!("q", { maxResults: 50 }, callContext());
    await provider({ max_results: 200 }).search!("q", { maxResults: 50 }, callContext());
    expect(brave.requests.map((r) => r.query.get("count"))).toEqual(["4", "20"]);
  });

  it("asks for extra snippets when configured", async () => {
    const [first] = await provider({ extra_snippets: true }).search!("q", { maxResults: 1 }, callContext());
    expect(brave.requests[0]?.query.get("extra_snippets")).toBe("true");
    expect(first?.snippet).toContain("Readable streams");
  });

  it("sends GET /res/v1/images/search and maps the answer; moderate safesearch becomes strict for images", async () => {
    const images = await provider().images!("red fox", { maxResults: 1 }, callContext());
    const [req] = brave.requests;
    expect(req?.path).toBe("/res/v1/images/search");
    expect(req?.headers["x-subscription-token"]).toBe(TOKEN);
    expect(Object.fromEntries(req?.query ?? [])).toEqual({ q: "red fox", count: "1", safesearch: "strict" });
    expect(images).toHaveLength(1);
    expect(images[0]?.imageUrl).toBe("https://upload.wikimedia.org/wikipedia/commons/a/a1/Vulpes_vulpes_snow.jpg");
  });

  it("calls Brave through vendorFetch when the tool layer supplies it, not the guarded fetch", async () => {
    const vendorCalls: string[] = [];
    const ctx: WebCallContext = {
      signal: new AbortController().signal,
      traceId: "trace-vendor",
      fetch: () => Promise.reject(new Error("the guarded fetch must not be used for the vendor API")),
      vendorFetch: (input, init) => {
        vendorCalls.push(String(input));
        return globalThis.fetch(input, init);
      },
    };
    const results = await provider().search!("q", { maxResults: 2 }, ctx);
    expect(results).toHaveLength(2);
    expect(vendorCalls).toEqual([expect.stringMatching(/\/res\/v1\/web\/search\?q=q&count=2&/)]);
  });

  it("prefers api_key from config over the environment", async () => {
    await provider({ api_key: TOKEN }, {}).search!("q", { maxResults: 1 }, callContext());
    expect(brave.requests[0]?.headers["x-subscription-token"]).toBe(TOKEN);
  });

  it("fails without a request when no key is configured, naming BRAVE_SEARCH_API_KEY", async () => {
    const error = await provider({}, {}).search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e);
    expect(isAntlerError(error)).toBe(true);
    expect(String((error as Error).message)).toContain("BRAVE_SEARCH_API_KEY");
    expect(brave.requests).toHaveLength(0);
  });

  it("turns a rejected token into WebProviderHttpError 401 carrying Brave's error body", async () => {
    const error = await provider({}, { BRAVE_SEARCH_API_KEY: "wrong" }).search!("q", { maxResults: 1 }, callContext()).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WebProviderHttpError);
    expect((error as WebProviderHttpError).status).toBe(401);
    expect((error as WebProviderHttpError).provider).toBe("brave");
    expect((error as WebProviderHttpError).body).toContain("SUBSCRIPTION_TOKEN_INVALID");
  });

  it("reports a 429 with its Retry-After for the tool layer's backoff", async () => {
    brave.queue({ ...BRAVE_RATE_LIMITED, headers: { ...BRAVE_RATE_LIMITED.headers, "retry-after": "2" } });
    const error = await provider().search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebProviderHttpError);
    expect((error as WebProviderHttpError).status).toBe(429);
    expect((error as WebProviderHttpError).retryAfterSeconds).toBe(2);
  });

  it("without Retry-After, takes the wait from X-RateLimit-Reset of the exhausted window", async () => {
    brave.queue(BRAVE_RATE_LIMITED, BRAVE_QUOTA_EXHAUSTED);
    const perSecond = (await provider().search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e)) as WebProviderHttpError;
    const monthly = (await provider().search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e)) as WebProviderHttpError;
    expect([perSecond.status, perSecond.retryAfterSeconds]).toEqual([429, 1]);
    expect([monthly.status, monthly.retryAfterSeconds]).toEqual([429, 1419704]);
    expect(monthly.body).toContain("RATE_LIMITED");
  });

  it("reports a 2xx answer that is not JSON as a vendor fault", async () => {
    brave.queue({ status: 200, body: "<html>maintenance</html>", headers: { "content-type": "text/html" } });
    await expect(provider().search!("q", { maxResults: 1 }, callContext())).rejects.toThrow(/not JSON: <html>maintenance/);
  });

  it("stops waiting when the call's signal aborts", async () => {
    brave.queue({ status: 200, body: braveWebSearchBody("q"), delayMs: 30_000 });
    const started = Date.now();
    await expect(provider().search!("q", { maxResults: 1 }, callContext(AbortSignal.timeout(100)))).rejects.toThrow(/abort|timeout/i);
    // Well short of the 30 s the answer is held back, with room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
