import { isAntlerError } from "@antler/kernel";
import { type WebCallContext, WebProviderHttpError } from "@antler/tools-web";
import { type LoopbackServer, stubLookup, webToolsHarness } from "@antler/tools-web/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import groundrouteToolsPlugin, { createGroundrouteProvider, groundrouteConfigSchema, mapGroundrouteSearchResults } from "../src/index.js";
import { groundrouteError, groundrouteSearchBody, startFakeGroundroute } from "./fake-groundroute.js";

const KEY = "gr_test_key_22b7";

function callContext(): WebCallContext {
  return { fetch: globalThis.fetch, signal: new AbortController().signal, traceId: "trace-groundroute-test" };
}

describe("GroundRoute mapping", () => {
  it("maps title, url, snippet (else content) and published_at", () => {
    expect(mapGroundrouteSearchResults(groundrouteSearchBody(2), { maxResults: 5, maxSnippetChars: 600, maxTitleChars: 200 })).toEqual([
      {
        title: "Antler regeneration study 1",
        url: "https://research.example.edu/antlers/1",
        snippet: "Study 1: antlers regrow from stem cells.",
        publishedAt: "2026-10-01T00:00:00Z",
      },
      {
        title: "Antler regeneration study 2",
        url: "https://research.example.edu/antlers/2",
        snippet: "Full text of study 2, which has no snippet.",
        publishedAt: undefined,
      },
    ]);
  });

  it("rejects an answer whose results are not a list", () => {
    expect(() => mapGroundrouteSearchResults({ results: "none" }, { maxResults: 5, maxSnippetChars: 600, maxTitleChars: 200 })).toThrow(
      /unexpected shape/,
    );
  });
});

describe("GroundRoute provider against a loopback GroundRoute", () => {
  let gr: LoopbackServer;
  beforeAll(async () => {
    gr = await startFakeGroundroute(KEY);
  });
  afterAll(() => gr.close());
  beforeEach(() => {
    gr.requests.length = 0;
  });

  const provider = (overrides: Record<string, unknown> = {}, env: Record<string, string | undefined> = { GROUNDROUTE_API_KEY: KEY }) =>
    createGroundrouteProvider(groundrouteConfigSchema.parse({ base_url: gr.url, ...overrides }), { env });

  it("sends POST /v1/search with a Bearer key and { query, max_results, mode: auto }", async () => {
    const results = await provider().search!("antler regeneration", { maxResults: 3 }, callContext());
    const [req] = gr.requests;
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/v1/search");
    expect(req?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.json).toEqual({ query: "antler regeneration", max_results: 3, mode: "auto" });
    expect(results).toHaveLength(3);
  });

  it("adds mode, freshness, domains, lang and country when configured, and clamps max_results to 50", async () => {
    await provider({ max_results: 50, mode: "academic", freshness: "semi", domains: ["arxiv.org"], lang: "en", country: "us" }).search!(
      "antlers",
      { maxResults: 400 },
      callContext(),
    );
    expect(gr.requests[0]?.json).toEqual({
      query: "antlers",
      max_results: 50,
      mode: "academic",
      freshness: "semi",
      domains: ["arxiv.org"],
      lang: "en",
      country: "us",
    });
  });

  it("fetches a page as a search in mode page for the URL, with one result, and returns its content", async () => {
    const page = await provider({ mode: "news", freshness: "fresh" }).fetch!("https://research.example.edu/antlers/1", callContext());
    expect(gr.requests[0]?.json).toEqual({ query: "https://research.example.edu/antlers/1", mode: "page", max_results: 1 });
    expect(page).toEqual({
      url: "https://research.example.edu/antlers/1",
      title: "Antler regeneration",
      content: "# Antler regeneration\n\nAntlers regrow from stem cells every year.",
      format: "markdown",
    });
  });

  it("reports an empty page with GroundRoute's request id", async () => {
    await expect(provider().fetch!("https://empty.example.org/", callContext())).rejects.toThrow(
      "groundroute returned an empty page for https://empty.example.org/ (request req_3f9a)",
    );
  });

  it("fails without a request when no key is configured, naming GROUNDROUTE_API_KEY", async () => {
    const error = await provider({}, {}).search!("q", { maxResults: 1 }, callContext()).catch((e: unknown) => e);
    expect(isAntlerError(error)).toBe(true);
    expect((error as Error).message).toContain("GROUNDROUTE_API_KEY");
    expect(gr.requests).toHaveLength(0);
  });

  it("a wrong key is WebProviderHttpError 401", async () => {
    const error = await provider({}, { GROUNDROUTE_API_KEY: "nope" }).search!("q", { maxResults: 1 }, callContext()).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WebProviderHttpError);
    expect((error as WebProviderHttpError).status).toBe(401);
  });
});

describe("GroundRoute through @antler/tools-web's tools", () => {
  let gr: LoopbackServer;
  beforeAll(async () => {
    gr = await startFakeGroundroute(KEY);
  });
  afterAll(() => gr.close());
  beforeEach(() => {
    gr.requests.length = 0;
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  const { tool, invoke } = webToolsHarness({
    providerPlugin: groundrouteToolsPlugin,
    providerConfig: () => ({ api_key: KEY, base_url: gr.url }),
    webOptions: { sleep: async () => {}, lookup: stubLookup() },
    webConfig: { search: "groundroute", fetch: "groundroute", retry: { attempts: 3, initial_delay_ms: 1, max_delay_ms: 5000 } },
  });
  const text = (m: { content: unknown }) => String(m.content);

  it("web_search returns the routed results, after a request carrying X-Trace-Id", async () => {
    const message = await invoke(await tool("web_search"), { query: "antlers", max_results: 2 });
    expect(message.status).toBe("success");
    const body = JSON.parse(text(message)) as { results: Array<{ url: string; published_at?: string }> };
    expect(body.results.map((r) => r.url)).toEqual(["https://research.example.edu/antlers/1", "https://research.example.edu/antlers/2"]);
    expect(body.results[0]?.published_at).toBe("2026-10-01T00:00:00Z");
    expect(gr.requests[0]?.headers["x-trace-id"]).toMatch(/^\S+$/);
  });

  it("web_fetch returns the page's Markdown", async () => {
    const message = await invoke(await tool("web_fetch"), { url: "https://research.example.edu/antlers/1" });
    expect(message.status).toBe("success");
    expect(text(message)).toContain("Antlers regrow from stem cells every year.");
  });

  it("HTTP 401 and 403 become error ToolMessages naming GROUNDROUTE_API_KEY", async () => {
    const unauthorized = await invoke(await tool("web_search", { api_key: "wrong" }), { query: "q" });
    expect(unauthorized.status).toBe("error");
    expect(text(unauthorized)).toContain("HTTP 401");
    expect(text(unauthorized)).toContain("GROUNDROUTE_API_KEY");
    gr.queue(groundrouteError(403, "key revoked"));
    const forbidden = await invoke(await tool("web_fetch"), { url: "https://research.example.edu/" });
    expect(text(forbidden)).toContain("HTTP 403");
    expect(text(forbidden)).toContain("GROUNDROUTE_API_KEY");
  });

  it("a missing key becomes an error ToolMessage naming GROUNDROUTE_API_KEY, and GroundRoute is not called", async () => {
    vi.stubEnv("GROUNDROUTE_API_KEY", "");
    const message = await invoke(await tool("web_fetch", { api_key: undefined }), { url: "https://research.example.edu/" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("GROUNDROUTE_API_KEY is not set");
    expect(gr.requests).toHaveLength(0);
  });

  it("a 429 with Retry-After is retried and the next answer is returned", async () => {
    gr.queue({ ...groundrouteError(429, "rate limited"), headers: { "retry-after": "0" } });
    const message = await invoke(await tool("web_search"), { query: "antlers" });
    expect(message.status).toBe("success");
    expect(gr.requests).toHaveLength(2);
  });

  it("a 503 on every try is reported after retry.attempts tries", async () => {
    const failure = groundrouteError(503, "all engines down");
    gr.queue(failure, failure, failure);
    const message = await invoke(await tool("web_search"), { query: "antlers" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("HTTP 503");
    expect(gr.requests).toHaveLength(3);
  });

  it("a 200 that is not JSON becomes an error ToolMessage quoting its first bytes", async () => {
    gr.queue({ status: 200, body: "upstream timeout", headers: { "content-type": "text/plain" } });
    const message = await invoke(await tool("web_fetch"), { url: "https://research.example.edu/" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("not JSON");
    expect(text(message)).toContain("upstream timeout");
  });

  it("a GroundRoute that does not answer within timeout_seconds gives a timeout ToolMessage", async () => {
    gr.queue({ status: 200, body: {}, delayMs: 5000 });
    const message = await invoke(await tool("web_search", {}, { timeout_seconds: 0.3 }), { query: "antlers" });
    expect(message.status).toBe("error");
    expect(text(message)).toContain("groundroute did not answer within 0.3 s");
  });
});
