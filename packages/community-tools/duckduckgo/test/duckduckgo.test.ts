import { type WebCallContext, WebProviderHttpError } from "@antler/tools-web";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createDuckDuckGoProvider, duckduckgoConfigSchema, parseDuckDuckGoHtml, resolveResultHref } from "../src/index.js";
import {
  CHALLENGE_REPLY,
  challengeHtml,
  type FakeDuckDuckGo,
  noResultsHtml,
  pageOneHtml,
  pageTwoHtml,
  startFakeDuckDuckGo,
  VQD,
} from "./fake-duckduckgo.js";

function callContext(signal: AbortSignal = new AbortController().signal): WebCallContext {
  return { fetch: globalThis.fetch, signal, traceId: "trace-ddg-test" };
}

const caps = { maxSnippetChars: 600, maxTitleChars: 200 };

describe("DuckDuckGo HTML parsing", () => {
  it("decodes uddg redirect links, skips the ad and reads titles, snippets and timestamps as text", () => {
    const page = parseDuckDuckGoHtml(pageOneHtml("rust"), caps);
    expect(page.challenged).toBe(false);
    expect(page.results).toEqual([
      {
        title: "Rust Programming Language",
        url: "https://www.rust-lang.org/",
        snippet:
          "A language empowering everyone to build reliable and efficient software. Rust is blazingly fast & memory-efficient: with no runtime or garbage collector.",
        publishedAt: undefined,
      },
      {
        title: "The Rust Programming Language - The Rust Programming Language",
        url: "https://doc.rust-lang.org/book/",
        snippet: "This version of the text assumes you're using Rust 1.85.0 (released 2025-02-17) or later.",
        publishedAt: "2025-02-20T00:00:00.0000000",
      },
      {
        title: "Rust (programming language) - Wikipedia",
        url: "https://en.wikipedia.org/wiki/Rust_(programming_language)",
        snippet: "Rust is a general-purpose programming language emphasizing performance, type safety, and concurrency.",
        publishedAt: undefined,
      },
    ]);
  });

  it("collects the hidden fields of the Next form, and none on the last page", () => {
    const next = parseDuckDuckGoHtml(pageOneHtml("rust lang"), caps).next;
    expect(Object.fromEntries(next ?? [])).toEqual({
      q: "rust lang",
      s: "10",
      nextParams: "",
      v: "l",
      o: "json",
      dc: "11",
      api: "d.js",
      vqd: VQD,
      kl: "wt-wt",
    });
    expect(parseDuckDuckGoHtml(pageTwoHtml("rust"), caps).next).toBeUndefined();
  });

  it("reads the No results placeholder as an empty page", () => {
    expect(parseDuckDuckGoHtml(noResultsHtml("zzqqxx"), caps)).toEqual({ results: [], next: undefined, challenged: false });
  });

  it("recognises the bot challenge page", () => {
    expect(parseDuckDuckGoHtml(challengeHtml(), caps).challenged).toBe(true);
  });

  it("resolves result links: redirector, protocol-relative, absolute, ads and junk", () => {
    expect(resolveResultHref("//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fa%3Fb%3D1%26c%3D2&rut=abc")).toBe(
      "https://example.com/a?b=1&c=2",
    );
    expect(resolveResultHref("/l/?uddg=http%3A%2F%2Fexample.org%2F")).toBe("http://example.org/");
    expect(resolveResultHref("https://example.net/page")).toBe("https://example.net/page");
    expect(resolveResultHref("https://duckduckgo.com/y.js?ad_domain=shop.example")).toBeUndefined();
    expect(resolveResultHref("//duckduckgo.com/l/?uddg=javascript%3Aalert(1)")).toBeUndefined();
    expect(resolveResultHref("//duckduckgo.com/l/?rut=abc")).toBeUndefined();
    expect(resolveResultHref(null)).toBeUndefined();
  });

  it("caps titles and snippets", () => {
    const [first] = parseDuckDuckGoHtml(pageOneHtml("rust"), { maxSnippetChars: 50, maxTitleChars: 20 }).results;
    expect(first?.title.length).toBeLessThanOrEqual(20);
    expect(first?.snippet.length).toBeLessThanOrEqual(50);
    expect(first?.snippet.endsWith("…")).toBe(true);
  });
});

describe("DuckDuckGo provider against a loopback HTML endpoint", () => {
  let ddg: FakeDuckDuckGo;
  beforeAll(async () => {
    ddg = await startFakeDuckDuckGo();
  });
  afterAll(() => ddg.close());
  beforeEach(() => {
    ddg.requests.length = 0;
  });

  const provider = (overrides: Record<string, unknown> = {}) =>
    createDuckDuckGoProvider(duckduckgoConfigSchema.parse({ base_url: ddg.url, ...overrides }));

  it("POSTs the search form to /html/ with q, region, safesearch and time range", async () => {
    const results = await provider({ region: "de-de", safesearch: "strict", time_range: "week" }).search!(
      "rust",
      { maxResults: 3 },
      callContext(),
    );
    expect(ddg.requests).toHaveLength(1);
    const [req] = ddg.requests;
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/html/");
    expect(req?.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(req?.headers["user-agent"]).toMatch(/^Mozilla\/5\.0/);
    expect(req?.headers.referer).toBe(`${ddg.url}/`);
    expect(Object.fromEntries(ddg.forms()[0] ?? [])).toEqual({ q: "rust", b: "", kl: "de-de", kp: "1", df: "w" });
    expect(results.map((r) => r.url)).toEqual([
      "https://www.rust-lang.org/",
      "https://doc.rust-lang.org/book/",
      "https://en.wikipedia.org/wiki/Rust_(programming_language)",
    ]);
  });

  it("follows the Next form for more results, without duplicates, and stops at max_results", async () => {
    const results = await provider().search!("rust", { maxResults: 5 }, callContext());
    expect(ddg.requests).toHaveLength(2);
    expect(ddg.forms()[1]?.get("s")).toBe("10");
    expect(ddg.forms()[1]?.get("vqd")).toBe(VQD);
    expect(results.map((r) => r.url)).toEqual([
      "https://www.rust-lang.org/",
      "https://doc.rust-lang.org/book/",
      "https://en.wikipedia.org/wiki/Rust_(programming_language)",
      "https://github.com/rust-lang/rust",
      "https://blog.rust-lang.org/",
    ]);
  });

  it("fetches no more than max_pages pages", async () => {
    const results = await provider({ max_pages: 1 }).search!("rust", { maxResults: 10 }, callContext());
    expect(ddg.requests).toHaveLength(1);
    expect(results).toHaveLength(3);
  });

  it("returns no results for a query DuckDuckGo has nothing for", async () => {
    expect(await provider().search!("zzqqxx", { maxResults: 5 }, callContext())).toEqual([]);
  });

  it("reports the bot challenge (HTTP 202) as a rate limit, so the tool layer backs off", async () => {
    ddg.queue(CHALLENGE_REPLY);
    const error = (await provider().search!("rust", { maxResults: 5 }, callContext()).catch((e: unknown) => e)) as WebProviderHttpError;
    expect(error).toBeInstanceOf(WebProviderHttpError);
    expect(error.status).toBe(429);
    expect(error.message).toContain("bot challenge");
  });

  it("reports a 5xx from the endpoint as WebProviderHttpError", async () => {
    ddg.queue({ status: 502, body: "<html><body>Bad Gateway</body></html>" });
    const error = (await provider().search!("rust", { maxResults: 5 }, callContext()).catch((e: unknown) => e)) as WebProviderHttpError;
    expect(error.status).toBe(502);
    expect(error.provider).toBe("duckduckgo");
  });
});
