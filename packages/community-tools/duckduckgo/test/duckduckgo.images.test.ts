import { type WebCallContext, WebProviderHttpError } from "@antler/tools-web";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createDuckDuckGoProvider,
  DUCKDUCKGO_REFUSAL_ADVICE,
  DuckDuckGoRefusalError,
  duckduckgoConfigSchema,
  extractVqd,
  isChallengePage,
  mapDuckDuckGoImages,
} from "../src/index.js";
import {
  CHALLENGE_REPLY,
  challengeHtml,
  type FakeDuckDuckGo,
  IMAGES_VQD,
  imagesJson,
  imagesPageHtml,
  LONG_IMAGE_TITLE,
  startFakeDuckDuckGo,
} from "./fake-duckduckgo.js";

function callContext(signal: AbortSignal = new AbortController().signal): WebCallContext {
  return { fetch: globalThis.fetch, signal, traceId: "trace-ddg-images-test" };
}

const WIKI_IMAGE = "https://upload.wikimedia.org/wikipedia/commons/1/16/Red_fox_%28Vulpes_vulpes%29.jpg";

describe("DuckDuckGo vqd extraction", () => {
  it.each(["quoted", "single-quoted", "url", "json"] as const)("finds the token written %s", (shape) => {
    expect(extractVqd(imagesPageHtml("red fox", shape))).toBe(IMAGES_VQD);
  });

  it("reads an unquoted token up to the next parameter, and stops at markup", () => {
    expect(extractVqd("fetch('/i.js?q=fox&vqd=4-1234-5678&p=1')")).toBe("4-1234-5678");
    expect(extractVqd('vqd="4-99"><script>')).toBe("4-99");
  });

  it("gives undefined for a page without a token, or with an empty one", () => {
    expect(extractVqd(imagesPageHtml("red fox", "none"))).toBeUndefined();
    expect(extractVqd('vqd=""; var vqd2 = 1;')).toBeUndefined();
    expect(extractVqd(challengeHtml())).toBeUndefined();
  });

  it("recognises the bot challenge page, and not the image page", () => {
    expect(isChallengePage(challengeHtml())).toBe(true);
    expect(isChallengePage(imagesPageHtml("red fox", "none"))).toBe(false);
  });
});

describe("DuckDuckGo i.js mapping", () => {
  it("maps image, thumbnail, page and size; drops non-http(s) images and repeats; caps long titles", () => {
    const results = mapDuckDuckGoImages(imagesJson("red fox", IMAGES_VQD), { maxResults: 10, maxTitleChars: 120 });
    expect(results.map((r) => r.imageUrl)).toEqual([
      WIKI_IMAGE,
      "http://photos.example.org/fox/winter-fox.jpg",
      "https://i.natgeofe.com/n/2f6c2e9b/red-fox.jpg",
      "https://images.example.net/fox-cub.jpg",
    ]);
    expect(results[0]).toEqual({
      title: "Red fox - Wikipedia",
      imageUrl: WIKI_IMAGE,
      thumbnailUrl: "https://tse2.mm.bing.net/th?id=OIP.Xb1q9c0r6Rk2yEo0&pid=Api",
      sourceUrl: "https://en.wikipedia.org/wiki/Red_fox",
      width: 2048,
      height: 1365,
    });
    const long = results[1];
    expect(LONG_IMAGE_TITLE.length).toBeGreaterThan(120);
    expect(long?.title.length).toBeLessThanOrEqual(120);
    expect(long?.title).toMatch(/^Red fox \(Vulpes vulpes\) standing in fresh powder snow .*…$/);
    // The protocol-relative proxy thumbnail is made absolute.
    expect(long?.thumbnailUrl).toBe(
      "https://external-content.duckduckgo.com/iu/?u=http%3A%2F%2Fphotos.example.org%2Ffox%2Fwinter-fox.jpg&f=1",
    );
    expect(results.every((r) => r.imageUrl.startsWith("http"))).toBe(true);
  });

  it("stops at maxResults", () => {
    expect(mapDuckDuckGoImages(imagesJson("red fox", IMAGES_VQD), { maxResults: 2, maxTitleChars: 200 })).toHaveLength(2);
  });

  it("titles an untitled image by its page's host, and ignores non-positive or missing sizes", () => {
    const [result] = mapDuckDuckGoImages(
      { results: [{ title: "  ", image: "https://img.example.com/a.jpg", url: "https://gallery.example.com/a", width: 0, height: "480" }] },
      { maxResults: 5, maxTitleChars: 200 },
    );
    expect(result).toEqual({
      title: "gallery.example.com",
      imageUrl: "https://img.example.com/a.jpg",
      thumbnailUrl: undefined,
      sourceUrl: "https://gallery.example.com/a",
      width: undefined,
      height: 480,
    });
  });

  it("rejects an answer that is not i.js's shape", () => {
    expect(() => mapDuckDuckGoImages({ results: "nope" }, { maxResults: 5, maxTitleChars: 200 })).toThrow(/unexpected shape/);
  });
});

describe("DuckDuckGo images provider against a loopback duckduckgo.com", () => {
  let ddg: FakeDuckDuckGo;
  beforeAll(async () => {
    ddg = await startFakeDuckDuckGo();
  });
  afterAll(() => ddg.close());
  beforeEach(() => {
    ddg.reset();
  });

  const provider = (overrides: Record<string, unknown> = {}) =>
    createDuckDuckGoProvider(
      duckduckgoConfigSchema.parse({ base_url: "http://127.0.0.1:9/unused", images_base_url: ddg.url, ...overrides }),
    );

  it("GETs the image page for the vqd, then i.js with q, vqd, region, safesearch and time filter", async () => {
    const results = await provider({ region: "de-de", safesearch: "off", time_range: "week" }).images!(
      "red fox & cubs",
      { maxResults: 3 },
      callContext(),
    );
    expect(ddg.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /", "GET /i.js"]);
    const [pageRequest, imagesRequest] = ddg.requests;
    expect(Object.fromEntries(pageRequest?.query ?? [])).toEqual({ q: "red fox & cubs", iax: "images", ia: "images" });
    expect(pageRequest?.headers["user-agent"]).toMatch(/^Mozilla\/5\.0/);
    expect(pageRequest?.headers.accept).toContain("text/html");
    expect(Object.fromEntries(imagesRequest?.query ?? [])).toEqual({
      l: "de-de",
      o: "json",
      q: "red fox & cubs",
      vqd: IMAGES_VQD,
      f: "time:week,,,,,",
      p: "-1",
    });
    expect(imagesRequest?.headers["user-agent"]).toMatch(/^Mozilla\/5\.0/);
    expect(imagesRequest?.headers.referer).toBe(`${ddg.url}/?q=red+fox+%26+cubs&iax=images&ia=images`);
    expect(imagesRequest?.headers.accept).toContain("application/json");
    expect(imagesRequest?.headers["x-requested-with"]).toBe("XMLHttpRequest");
    expect(results.map((r) => r.imageUrl)).toEqual([
      WIKI_IMAGE,
      "http://photos.example.org/fox/winter-fox.jpg",
      "https://i.natgeofe.com/n/2f6c2e9b/red-fox.jpg",
    ]);
  });

  it("sends the defaults: no region, safesearch on (moderate), no filters", async () => {
    await provider().images!("red fox", { maxResults: 5 }, callContext());
    const query = ddg.requests[1]?.query;
    expect(query?.get("l")).toBe("wt-wt");
    expect(query?.get("p")).toBe("1");
    expect(query?.get("f")).toBe(",,,,,");
  });

  it("caps the results at the provider's max_results, whatever the call asks for", async () => {
    const results = await provider({ max_results: 2 }).images!("red fox", { maxResults: 10 }, callContext());
    expect(results).toHaveLength(2);
  });

  it.each(["url", "single-quoted", "json"] as const)("uses a vqd the page writes %s", async (shape) => {
    ddg.vqdShape = shape;
    const results = await provider().images!("red fox", { maxResults: 5 }, callContext());
    expect(ddg.requests[1]?.query.get("vqd")).toBe(IMAGES_VQD);
    expect(results).toHaveLength(4);
  });

  it("a page without a vqd is a refusal naming other providers, and i.js is not called", async () => {
    ddg.vqdShape = "none";
    const error = await provider().images!("red fox", { maxResults: 5 }, callContext()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuckDuckGoRefusalError);
    expect((error as Error).message).toContain("DuckDuckGo refused the automated request");
    expect((error as Error).message).toContain("no vqd token");
    expect((error as Error).message).toMatch(/brave, serper/);
    expect(ddg.requests).toHaveLength(1);
  });

  it("a 403 from i.js is reported as DuckDuckGo refusing the automated request", async () => {
    ddg.queueFor("/i.js", { status: 403, body: "" });
    const error = (await provider().images!("red fox", { maxResults: 5 }, callContext()).catch((e: unknown) => e)) as WebProviderHttpError;
    expect(error).toBeInstanceOf(WebProviderHttpError);
    expect(error.status).toBe(403);
    expect(error.body).toBe(DUCKDUCKGO_REFUSAL_ADVICE);
  });

  it("a 418 on the image page is the same refusal", async () => {
    ddg.queueFor("/", { status: 418, body: "I'm a teapot" });
    const error = (await provider().images!("red fox", { maxResults: 5 }, callContext()).catch((e: unknown) => e)) as WebProviderHttpError;
    expect(error.status).toBe(418);
    expect(error.body).toContain("DuckDuckGo refused the automated request");
    expect(ddg.requests).toHaveLength(1);
  });

  it("the bot challenge instead of the image page is a rate limit (429), as for web_search", async () => {
    ddg.queueFor("/", CHALLENGE_REPLY);
    const error = (await provider().images!("red fox", { maxResults: 5 }, callContext()).catch((e: unknown) => e)) as WebProviderHttpError;
    expect(error.status).toBe(429);
    expect(error.message).toContain("bot challenge");
  });

  it("a 5xx from i.js is a WebProviderHttpError with its status", async () => {
    ddg.queueFor("/i.js", { status: 502, body: "Bad Gateway" });
    const error = (await provider().images!("red fox", { maxResults: 5 }, callContext()).catch((e: unknown) => e)) as WebProviderHttpError;
    expect(error.status).toBe(502);
    expect(error.provider).toBe("duckduckgo");
  });
});
