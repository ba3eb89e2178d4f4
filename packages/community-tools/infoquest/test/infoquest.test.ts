import { type WebCallContext, WebProviderHttpError } from "@antler/tools-web";
import { stubLookup, webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import infoquestToolsPlugin, {
  createInfoquestProvider,
  infoquestConfigSchema,
  mapInfoquestImageResults,
  mapInfoquestSearchResults,
} from "../src/index.js";
import {
  type FakeInfoquest,
  infoquestError,
  infoquestImagesBody,
  infoquestSearchBody,
  READER_HTML,
  startFakeInfoquest,
} from "./fake-infoquest.js";

const KEY = "iq-test-key-90aa";

function callContext(): WebCallContext {
  return { fetch: globalThis.fetch, signal: new AbortController().signal, traceId: "trace-infoquest-test" };
}

const caps = { maxResults: 10, maxSnippetChars: 600, maxTitleChars: 200 };

describe("InfoQuest mapping", () => {
  it("maps organic pages first, then top stories with source and age, each URL once", () => {
    expect(mapInfoquestSearchResults(infoquestSearchBody(), caps)).toEqual([
      {
        title: "Antler - Wikipedia",
        url: "https://en.wikipedia.org/wiki/Antler",
        snippet: "Antlers are extensions of the skull grown by deer.",
      },
      { title: "Velvet antler", url: "https://www.britannica.com/science/antler", snippet: "Antlers grow in velvet." },
      { title: "Record antlers found", url: "https://news.example.com/record-antlers", snippet: "Deer News · 2 hours ago" },
    ]);
  });

  it("maps images: original is the image, url the page; repeats and non-http images are dropped", () => {
    expect(mapInfoquestImageResults(infoquestImagesBody(), caps)).toEqual([
      {
        title: "Red deer stag",
        imageUrl: "https://upload.example.org/red-deer.jpg",
        thumbnailUrl: "https://thumbs.example.org/red-deer.jpg",
        sourceUrl: "https://photos.example.org/red-deer",
        width: 1600,
        height: 1067,
      },
      {
        title: "Fallow deer",
        imageUrl: "https://upload.example.org/fallow.jpg",
        thumbnailUrl: undefined,
        sourceUrl: undefined,
        width: undefined,
        height: undefined,
      },
    ]);
  });

  it("rejects an answer without search_result", () => {
    expect(() => mapInfoquestSearchResults({ content: "quota exceeded" }, caps)).toThrow(/without search_result\.results/);
  });
});

describe("InfoQuest provider against a loopback InfoQuest", () => {
  let iq: FakeInfoquest;
  beforeAll(async () => {
    iq = await startFakeInfoquest(KEY);
  });
  afterAll(() => iq.close());
  beforeEach(() => {
    iq.requests.length = 0;
  });

  const provider = (overrides: Record<string, unknown> = {}, env: Record<string, string | undefined> = { INFOQUEST_API_KEY: KEY }) =>
    createInfoquestProvider(infoquestConfigSchema.parse({ search_url: iq.searchUrl, reader_url: iq.readerUrl, ...overrides }), { env });

  it("searches with POST to the search endpoint, a Bearer key and { format: JSON, query, time_range, site }", async () => {
    const results = await provider({ time_range: 7, site: "wikipedia.org" }).search!("antler", { maxResults: 2 }, callContext());
    const [req] = iq.requests;
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/search");
    expect(req?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.json).toEqual({ format: "JSON", query: "antler", time_range: 7, site: "wikipedia.org" });
    expect(results.map((r) => r.url)).toEqual(["https://en.wikipedia.org/wiki/Antler", "https://www.britannica.com/science/antler"]);
  });

  it("searches images with search_type Images, image_size and the image time range", async () => {
    const images = await provider({ image_time_range: 30, image_size: "l" }).images!("red deer", { maxResults: 5 }, callContext());
    expect(iq.requests[0]?.json).toEqual({ format: "JSON", query: "red deer", search_type: "Images", image_size: "l", time_range: 30 });
    expect(images.map((i) => i.imageUrl)).toEqual(["https://upload.example.org/red-deer.jpg", "https://upload.example.org/fallow.jpg"]);
  });

  it("reads a page with POST to the reader endpoint, { url, format: HTML, timeout, navi_timeout }, as HTML", async () => {
    const page = await provider({ fetch_timeout_seconds: 20, fetch_navigation_timeout_seconds: 10 }).fetch!(
      "https://deer.example.org/antlers",
      callContext(),
    );
    expect(iq.requests[0]?.path).toBe("/reader");
    expect(iq.requests[0]?.json).toEqual({ url: "https://deer.example.org/antlers", format: "HTML", timeout: 20, navi_timeout: 10 });
    expect(page).toEqual({ url: "https://deer.example.org/antlers", content: READER_HTML, format: "html" });
  });

  it("reports an empty reader result", async () => {
    await expect(provider().fetch!("https://blank.example.org/", callContext())).rejects.toThrow(
      "infoquest's reader returned an empty page for https://blank.example.org/",
    );
  });

  it("fails without a request when no key is configured, naming INFOQUEST_API_KEY", async () => {
    const error = await provider({}, {}).fetch!("https://deer.example.org/", callContext()).catch((e: unknown) => e);
    expect((error as Error).message).toContain("INFOQUEST_API_KEY");
    expect(iq.requests).toHaveLength(0);
  });

  it("a wrong key is WebProviderHttpError 401 on search and on the reader", async () => {
    const wrong = provider({}, { INFOQUEST_API_KEY: "nope" });
    for (const call of [
      () => wrong.search!("q", { maxResults: 1 }, callContext()),
      () => wrong.fetch!("https://a.example/", callContext()),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WebProviderHttpError);
      expect((error as WebProviderHttpError).status).toBe(401);
    }
  });
});

describe("InfoQuest through @antler/tools-web's tools", () => {
  let iq: FakeInfoquest;
  beforeAll(async () => {
    iq = await startFakeInfoquest(KEY);
  });
  afterAll(() => iq.close());
  beforeEach(() => {
    iq.requests.length = 0;
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  const { tool, invoke } = webToolsHarness({
    providerPlugin: infoquestToolsPlugin,
    providerConfig: () => ({ api_key: KEY, search_url: iq.searchUrl, reader_url: iq.readerUrl }),
    webOptions: { sleep: async () => {}, lookup: stubLookup() },
    webConfig: {
      search: "infoquest",
      fetch: "infoquest",
      images: "infoquest",
      retry: { attempts: 3, initial_delay_ms: 1, max_delay_ms: 5000 },
    },
  });
  const text = (m: { content: unknown }) => String(m.content);

  it("web_fetch extracts the reader's HTML into readable Markdown, with X-Trace-Id on the request", async () => {
    const message = await invoke(await tool("web_fetch"), { url: "https://deer.example.org/antlers" });
    expect(message.status).toBe("success");
    expect(text(message)).toContain("# Antler growth");
    expect(text(message)).toContain("They grow up to 2.5 cm a day.");
    expect(text(message)).not.toContain("<article>");
    expect(iq.requests[0]?.headers["x-trace-id"]).toMatch(/^\S+$/);
  });

  it("image_search returns the images", async () => {
    const message = await invoke(await tool("image_search"), { query: "red deer", max_results: 1 });
    expect(message.status).toBe("success");
    expect((JSON.parse(text(message)) as { results: Array<{ image_url: string }> }).results.map((r) => r.image_url)).toEqual([
      "https://upload.example.org/red-deer.jpg",
    ]);
  });

  it("HTTP 401 and 403 become error ToolMessages naming INFOQUEST_API_KEY", async () => {
    const unauthorized = await invoke(await tool("web_search", { api_key: "wrong" }), { query: "antler" });
    expect(unauthorized.status).toBe("error");
    expect(text(unauthorized)).toContain("HTTP 401");
    expect(text(unauthorized)).toContain("INFOQUEST_API_KEY");
    iq.queue(infoquestError(403, "region not served"));
    const forbidden = await invoke(await tool("web_fetch"), { url: "https://deer.example.org/" });
    expect(text(forbidden)).toContain("HTTP 403");
    expect(text(forbidden)).toContain("INFOQUEST_API_KEY");
  });

  it("a missing key becomes an error ToolMessage naming INFOQUEST_API_KEY, and InfoQuest is not called", async () => {
    vi.stubEnv("INFOQUEST_API_KEY", "");
    const message = await invoke(await tool("web_search", { api_key: undefined }), { query: "antler" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("INFOQUEST_API_KEY is not set");
    expect(iq.requests).toHaveLength(0);
  });

  it("a 429 with Retry-After is retried and the next answer is returned", async () => {
    iq.queue({ ...infoquestError(429, "too many requests"), headers: { "retry-after": "0" } });
    const message = await invoke(await tool("web_search"), { query: "antler" });
    expect(message.status).toBe("success");
    expect(iq.requests).toHaveLength(2);
  });

  it("a 502 on every try is reported after retry.attempts tries", async () => {
    const failure = infoquestError(502, "bad gateway");
    iq.queue(failure, failure, failure);
    const message = await invoke(await tool("web_fetch"), { url: "https://deer.example.org/" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 502");
    expect(iq.requests).toHaveLength(3);
  });

  it("a search answer that is not JSON becomes an error ToolMessage quoting its first bytes", async () => {
    iq.queue({ status: 200, body: "<html>maintenance</html>", headers: { "content-type": "text/html" } });
    const message = await invoke(await tool("web_search"), { query: "antler" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("not JSON");
    expect(text(message)).toContain("maintenance");
  });

  it("an InfoQuest that does not answer within timeout_seconds gives a timeout ToolMessage", async () => {
    iq.queue({ status: 200, body: {}, delayMs: 5000 });
    const message = await invoke(await tool("image_search", {}, { timeout_seconds: 0.3 }), { query: "deer" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("infoquest did not answer within 0.3 s");
  });
});
