import { isAntlerError } from "@antler/kernel";
import { type WebCallContext, WebProviderHttpError } from "@antler/tools-web";
import { webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import serplyToolsPlugin, { createSerplyProvider, mapSerplySearchResults, serplyConfigSchema } from "../src/index.js";
import { type FakeSerply, serplyError, serplyParams, serplySearchBody, startFakeSerply } from "./fake-serply.js";

const KEY = "serply-test-key-41c2";

function callContext(): WebCallContext {
  return { fetch: globalThis.fetch, signal: new AbortController().signal, traceId: "trace-serply-test" };
}

const caps = { maxResults: 10, maxSnippetChars: 600, maxTitleChars: 200 };

describe("Serply mapping", () => {
  it("maps results to title, url and snippet, dropping repeated, missing and non-http links", () => {
    const results = mapSerplySearchResults(serplySearchBody("antler", 10), caps);
    expect(results.map((r) => r.url)).toEqual([
      "https://en.wikipedia.org/wiki/Antler",
      "https://www.nwf.org/Magazines/National-Wildlife/2018/Oct-Nov/Animals/Deer-Antlers",
      "https://www.britannica.com/science/antler",
    ]);
    expect(results[1]).toEqual({
      title: "How Deer Grow Antlers",
      url: "https://www.nwf.org/Magazines/National-Wildlife/2018/Oct-Nov/Animals/Deer-Antlers",
      snippet: "Antlers are the fastest-growing bone in the animal kingdom.",
    });
  });

  it("caps results, titles and snippets", () => {
    const results = mapSerplySearchResults(serplySearchBody("antler", 10), { maxResults: 1, maxSnippetChars: 40, maxTitleChars: 20 });
    expect(results).toHaveLength(1);
    expect(results[0]?.title.length).toBeLessThanOrEqual(20);
    expect(results[0]?.snippet.length).toBeLessThanOrEqual(40);
    expect(results[0]?.snippet.endsWith("…")).toBe(true);
  });

  it("rejects an answer whose results field is not a list", () => {
    expect(() => mapSerplySearchResults({ results: { title: "x" } }, caps)).toThrow(/unexpected search shape/);
  });
});

describe("Serply provider against a loopback Serply API", () => {
  let serply: FakeSerply;
  beforeAll(async () => {
    serply = await startFakeSerply(KEY);
  });
  afterAll(() => serply.close());
  beforeEach(() => {
    serply.requests.length = 0;
  });

  const provider = (overrides: Record<string, unknown> = {}, env: Record<string, string | undefined> = { SERPLY_API_KEY: KEY }) =>
    createSerplyProvider(serplyConfigSchema.parse({ base_url: serply.baseUrl, ...overrides }), { env });

  it("sends GET /v1/search/<form-encoded q, num, gl, hl, lr> with X-Api-Key, X-User-Agent and X-Proxy-Location", async () => {
    const results = await provider({ gl: "de", hl: "de", lr: "lang_de", proxy_location: "DE", device: "mobile" }).search!(
      "rote Hirsche & Geweihe",
      { maxResults: 3 },
      callContext(),
    );
    const [req] = serply.requests;
    expect(req?.method).toBe("GET");
    expect(req?.path).toBe("/v1/search/q=rote+Hirsche+%26+Geweihe&num=3&gl=de&hl=de&lr=lang_de");
    expect([...(req?.query.keys() ?? [])]).toEqual([]);
    expect(req?.text).toBe("");
    expect(req?.headers["x-api-key"]).toBe(KEY);
    expect(req?.headers["x-user-agent"]).toBe("mobile");
    expect(req?.headers["x-proxy-location"]).toBe("DE");
    expect(req ? Object.fromEntries(serplyParams(req) ?? []) : undefined).toEqual({
      q: "rote Hirsche & Geweihe",
      num: "3",
      gl: "de",
      hl: "de",
      lr: "lang_de",
    });
    expect(results.map((r) => r.url)).toEqual([
      "https://en.wikipedia.org/wiki/Antler",
      "https://www.nwf.org/Magazines/National-Wildlife/2018/Oct-Nov/Animals/Deer-Antlers",
      "https://www.britannica.com/science/antler",
    ]);
  });

  it("sends only q and num by default, as a desktop search without a proxy location", async () => {
    await provider().search!("antler", { maxResults: 5 }, callContext());
    expect(serply.requests[0]?.path).toBe("/v1/search/q=antler&num=5");
    expect(serply.requests[0]?.headers["x-user-agent"]).toBe("desktop");
    expect(serply.requests[0]?.headers["x-proxy-location"]).toBeUndefined();
  });

  it("clamps num to the config's max_results", async () => {
    await provider({ max_results: 2 }).search!("antler", { maxResults: 50 }, callContext());
    expect(serply.requests[0] ? serplyParams(serply.requests[0])?.get("num") : undefined).toBe("2");
  });

  it("fails without a request when no key is configured, naming SERPLY_API_KEY", async () => {
    const error = await provider({}, {}).search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e);
    expect(isAntlerError(error)).toBe(true);
    expect((error as Error).message).toContain("SERPLY_API_KEY");
    expect(serply.requests).toHaveLength(0);
  });

  it("turns Serply's 401 for a wrong key into WebProviderHttpError 401 with its body", async () => {
    const error = await provider({}, { SERPLY_API_KEY: "nope" }).search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebProviderHttpError);
    expect((error as WebProviderHttpError).status).toBe(401);
    expect((error as WebProviderHttpError).body).toContain("Unauthorized");
  });

  it("keeps a 429's Retry-After in seconds", async () => {
    serply.queue({ ...serplyError(429, "Too Many Requests"), headers: { "retry-after": "7" } });
    const error = (await provider().search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e)) as WebProviderHttpError;
    expect(error.status).toBe(429);
    expect(error.retryAfterSeconds).toBe(7);
  });
});

describe("Serply through @antler/tools-web's tools", () => {
  let serply: FakeSerply;
  beforeAll(async () => {
    serply = await startFakeSerply(KEY);
  });
  afterAll(() => serply.close());
  beforeEach(() => {
    serply.requests.length = 0;
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  const { tool, invoke } = webToolsHarness({
    providerPlugin: serplyToolsPlugin,
    providerConfig: () => ({ api_key: KEY, base_url: serply.baseUrl }),
    webOptions: { sleep: async () => {} },
    webConfig: { search: "serply", fetch: null, retry: { attempts: 3, initial_delay_ms: 1, max_delay_ms: 5000 } },
  });
  const text = (m: { content: unknown }) => String(m.content);

  it("web_search returns Serply's organic results, after a GET carrying X-Api-Key and X-Trace-Id", async () => {
    const message = await invoke(await tool("web_search"), { query: "antler", max_results: 2 });
    expect(message.status).toBe("success");
    const body = JSON.parse(text(message)) as { provider: string; results: Array<Record<string, string>> };
    expect(body.provider).toBe("serply");
    expect(body.results.map((r) => r.url)).toEqual([
      "https://en.wikipedia.org/wiki/Antler",
      "https://www.nwf.org/Magazines/National-Wildlife/2018/Oct-Nov/Animals/Deer-Antlers",
    ]);
    expect(serply.requests[0]?.path).toBe("/v1/search/q=antler&num=2");
    expect(serply.requests[0]?.headers["x-trace-id"]).toMatch(/^\S+$/);
  });

  it("HTTP 401 becomes an error ToolMessage naming SERPLY_API_KEY", async () => {
    const message = await invoke(await tool("web_search", { api_key: "wrong" }), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 401");
    expect(text(message)).toContain("SERPLY_API_KEY");
  });

  it("HTTP 403 becomes an error ToolMessage naming SERPLY_API_KEY, not retried", async () => {
    serply.queue(serplyError(403, "Forbidden"));
    const message = await invoke(await tool("web_search"), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 403");
    expect(text(message)).toContain("SERPLY_API_KEY");
    expect(serply.requests).toHaveLength(1);
  });

  it("a missing key becomes an error ToolMessage naming SERPLY_API_KEY, and Serply is not called", async () => {
    vi.stubEnv("SERPLY_API_KEY", "");
    const message = await invoke(await tool("web_search", { api_key: undefined }), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("SERPLY_API_KEY is not set");
    expect(serply.requests).toHaveLength(0);
  });

  it("a 429 with Retry-After is retried and the next answer is returned", async () => {
    serply.queue({ ...serplyError(429, "Too Many Requests"), headers: { "retry-after": "0" } });
    const message = await invoke(await tool("web_search"), { query: "antler" });
    expect(message.status).toBe("success");
    expect(serply.requests).toHaveLength(2);
  });

  it("a 502 on every try is reported after retry.attempts tries", async () => {
    const failure = serplyError(502, "Bad Gateway");
    serply.queue(failure, failure, failure);
    const message = await invoke(await tool("web_search"), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 502");
    expect(text(message)).toContain("after 3 tries");
    expect(serply.requests).toHaveLength(3);
  });

  it("a 200 that is not JSON becomes an error ToolMessage quoting its first bytes", async () => {
    serply.queue({ status: 200, body: "<html>upstream proxy error</html>", headers: { "content-type": "text/html" } });
    const message = await invoke(await tool("web_search"), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("not JSON");
    expect(text(message)).toContain("upstream proxy error");
  });

  it("a Serply that does not answer within timeout_seconds gives a timeout ToolMessage", async () => {
    serply.queue({ status: 200, body: {}, delayMs: 5000 });
    const message = await invoke(await tool("web_search", {}, { timeout_seconds: 0.3 }), { query: "q" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("serply did not answer within 0.3 s");
  });
});
