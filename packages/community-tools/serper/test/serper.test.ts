import { isAntlerError } from "@antler/kernel";
import { type WebCallContext, WebProviderHttpError } from "@antler/tools-web";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSerperProvider, mapSerperImageResults, mapSerperSearchResults, serperConfigSchema } from "../src/index.js";
import { type FakeSerper, serperImagesBody, serperSearchBody, startFakeSerper } from "./fake-serper.js";

const KEY = "serper-test-key-9f8e";

function callContext(signal: AbortSignal = new AbortController().signal): WebCallContext {
  return { fetch: globalThis.fetch, signal, traceId: "trace-serper-test" };
}

const caps = { maxResults: 10, maxSnippetChars: 600, maxTitleChars: 200 };

describe("Serper mapping", () => {
  it("puts the linked answer box first, then organic results, without repeating its URL", () => {
    const results = mapSerperSearchResults(serperSearchBody("speed of light", 10), { ...caps, includeAnswerBox: true });
    expect(results.map((r) => r.url)).toEqual([
      "https://en.wikipedia.org/wiki/Speed_of_light",
      "https://science.nasa.gov/ems/speed-of-light/",
      "https://www.britannica.com/science/speed-of-light",
    ]);
    expect(results[0]?.snippet.startsWith("299,792,458 m/s — The speed of light in vacuum")).toBe(true);
  });

  it("maps organic results only when the answer box is off, collapsing whitespace and keeping the date", () => {
    const results = mapSerperSearchResults(serperSearchBody("speed of light", 10), caps);
    expect(results[0]?.snippet).toBe("The speed of light in vacuum, commonly denoted c, is a universal physical constant...");
    expect(results[1]).toEqual({
      title: "How Fast Is the Speed of Light? | NASA",
      url: "https://science.nasa.gov/ems/speed-of-light/",
      snippet: "Light travels at a constant, finite speed of 186,000 mi/sec.",
      publishedAt: "Mar 3, 2024",
    });
  });

  it("caps results, titles and snippets", () => {
    const results = mapSerperSearchResults(serperSearchBody("q", 10), { maxResults: 1, maxSnippetChars: 40, maxTitleChars: 20 });
    expect(results).toHaveLength(1);
    expect(results[0]?.title.length).toBeLessThanOrEqual(20);
    expect(results[0]?.snippet.length).toBeLessThanOrEqual(40);
    expect(results[0]?.snippet.endsWith("…")).toBe(true);
  });

  it("rejects an answer whose organic field is not a list", () => {
    expect(() => mapSerperSearchResults({ organic: "nope" }, caps)).toThrow(/unexpected search shape/);
  });

  it("maps images: imageUrl is the image, link the page; a non-http image is dropped", () => {
    expect(mapSerperImageResults(serperImagesBody("golden gate", 10), caps)).toEqual([
      {
        title: "Golden Gate Bridge at sunset",
        imageUrl: "https://upload.wikimedia.org/wikipedia/commons/0/0c/GoldenGateBridge-001.jpg",
        thumbnailUrl: "https://encrypted-tbn0.gstatic.com/images?q=tbn:ANd9GcR1",
        sourceUrl: "https://en.wikipedia.org/wiki/Golden_Gate_Bridge",
        width: 2560,
        height: 1707,
      },
      {
        title: "Example Travel",
        imageUrl: "https://www.example.com/ggb.webp",
        thumbnailUrl: undefined,
        sourceUrl: "https://www.example.com/golden-gate",
        width: undefined,
        height: undefined,
      },
    ]);
  });
});

describe("Serper provider against a loopback Serper API", () => {
  let serper: FakeSerper;
  beforeAll(async () => {
    serper = await startFakeSerper(KEY);
  });
  afterAll(() => serper.close());
  beforeEach(() => {
    serper.requests.length = 0;
  });

  const provider = (overrides: Record<string, unknown> = {}, env: Record<string, string | undefined> = { SERPER_API_KEY: KEY }) =>
    createSerperProvider(serperConfigSchema.parse({ base_url: serper.baseUrl, ...overrides }), { env });

  it("sends POST /search with X-API-KEY and a JSON body of q, num, gl, hl and location", async () => {
    const results = await provider({ gl: "de", hl: "de", location: "Berlin, Germany" }).search!(
      "speed of light",
      { maxResults: 3 },
      callContext(),
    );
    const [req] = serper.requests;
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/search");
    expect(req?.headers["x-api-key"]).toBe(KEY);
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(serper.bodies()[0]).toEqual({ q: "speed of light", num: 3, gl: "de", hl: "de", location: "Berlin, Germany" });
    expect(results.map((r) => r.url)).toEqual([
      "https://en.wikipedia.org/wiki/Speed_of_light",
      "https://science.nasa.gov/ems/speed-of-light/",
      "https://www.britannica.com/science/speed-of-light",
    ]);
  });

  it("clamps num to the config's max_results", async () => {
    await provider({ max_results: 2 }).search!("q", { maxResults: 50 }, callContext());
    expect(serper.bodies()[0]?.num).toBe(2);
  });

  it("sends POST /images and maps the answer", async () => {
    const images = await provider().images!("golden gate", { maxResults: 5 }, callContext());
    expect(serper.requests[0]?.path).toBe("/images");
    expect(serper.requests[0]?.headers["x-api-key"]).toBe(KEY);
    expect(serper.bodies()[0]).toEqual({ q: "golden gate", num: 5 });
    expect(images.map((i) => i.imageUrl)).toEqual([
      "https://upload.wikimedia.org/wikipedia/commons/0/0c/GoldenGateBridge-001.jpg",
      "https://www.example.com/ggb.webp",
    ]);
  });

  it("fails without a request when no key is configured, naming SERPER_API_KEY", async () => {
    const error = await provider({}, {}).search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e);
    expect(isAntlerError(error)).toBe(true);
    expect((error as Error).message).toContain("SERPER_API_KEY");
    expect(serper.requests).toHaveLength(0);
  });

  it("turns Serper's 403 for a wrong key into WebProviderHttpError 403", async () => {
    const error = await provider({}, { SERPER_API_KEY: "nope" }).images!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebProviderHttpError);
    expect((error as WebProviderHttpError).status).toBe(403);
    expect((error as WebProviderHttpError).body).toContain("Unauthorized.");
  });

  it("reports a 503 with its HTTP-date Retry-After in seconds", async () => {
    const at = new Date(Date.now() + 5000).toUTCString();
    serper.queue({ status: 503, body: { message: "Service Unavailable", statusCode: 503 }, headers: { "retry-after": at } });
    const error = (await provider().search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e)) as WebProviderHttpError;
    expect(error.status).toBe(503);
    expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(3);
    expect(error.retryAfterSeconds).toBeLessThanOrEqual(6);
  });
});
