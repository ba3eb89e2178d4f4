import { isAntlerError } from "@antler/kernel";
import { type WebCallContext, WebProviderHttpError } from "@antler/tools-web";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createExaProvider, ExaContentsError, exaConfigSchema, mapExaContents, mapExaSearchResults } from "../src/index.js";
import { exaContentsBody, exaSearchBody, type FakeExa, startFakeExa } from "./fake-exa.js";

const KEY = "exa-test-key-42";

function callContext(signal: AbortSignal = new AbortController().signal): WebCallContext {
  return { fetch: globalThis.fetch, signal, traceId: "trace-exa-test" };
}

const caps = { maxResults: 10, maxSnippetChars: 600, maxTitleChars: 200 };

describe("Exa mapping", () => {
  it("joins highlights into the snippet, falls back to text, and to the URL for a null title", () => {
    const results = mapExaSearchResults(exaSearchBody("llm", 10), caps);
    expect(results).toHaveLength(2);
    expect(results[0]).toEqual({
      title: "A Comprehensive Overview of Large Language Models",
      url: "https://arxiv.org/abs/2307.06435",
      snippet:
        "Large Language Models (LLMs) have recently demonstrated remarkable capabilities in natural language processing tasks. … This article provides an overview of the existing literature on a broad range of LLM-related concepts.",
      publishedAt: "2023-07-12T00:00:00.000Z",
    });
    expect(results[1]?.title).toBe("https://lilianweng.github.io/posts/2023-06-23-agent/");
    expect(
      results[1]?.snippet.startsWith("Building agents with LLM (large language model) as its core controller is a cool concept. Several"),
    ).toBe(true);
    expect(results[1]?.publishedAt).toBeUndefined();
  });

  it("rejects an answer without a results list", () => {
    expect(() => mapExaSearchResults({ requestId: "x" }, caps)).toThrow(/unexpected search shape/);
  });

  it("maps /contents to Markdown of the requested page", () => {
    expect(
      mapExaContents(
        exaContentsBody(["https://lilianweng.github.io/posts/2023-06-23-agent/"]),
        "https://lilianweng.github.io/posts/2023-06-23-agent/",
      ),
    ).toEqual({
      url: "https://lilianweng.github.io/posts/2023-06-23-agent/",
      title: "Agents | Lil'Log",
      content: expect.stringContaining("# LLM Powered Autonomous Agents"),
      format: "markdown",
    });
  });

  it("turns a per-URL error status into ExaContentsError naming the page's status, not a key error", () => {
    const error = (() => {
      try {
        mapExaContents(exaContentsBody(["https://example.com/forbidden"]), "https://example.com/forbidden");
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ExaContentsError);
    expect(error).not.toBeInstanceOf(WebProviderHttpError);
    expect((error as Error).message).toBe(
      "exa could not fetch https://example.com/forbidden: SOURCE_NOT_AVAILABLE (the page answered HTTP 403). Check the URL, or fetch it with another provider.",
    );
  });

  it("reports an empty /contents answer as no content", () => {
    expect(() => mapExaContents({ results: [] }, "https://example.com/")).toThrow(/NO_CONTENT_RETURNED/);
  });
});

describe("Exa provider against a loopback Exa API", () => {
  let exa: FakeExa;
  beforeAll(async () => {
    exa = await startFakeExa(KEY);
  });
  afterAll(() => exa.close());
  beforeEach(() => {
    exa.requests.length = 0;
  });

  const provider = (overrides: Record<string, unknown> = {}, env: Record<string, string | undefined> = { EXA_API_KEY: KEY }) =>
    createExaProvider(exaConfigSchema.parse({ base_url: exa.baseUrl, ...overrides }), { env });

  it("sends POST /search with x-api-key, numResults, type and highlights nested under contents", async () => {
    const results = await provider({ search_type: "neural", include_domains: ["arxiv.org"] }).search!(
      "llm agents survey",
      { maxResults: 2 },
      callContext(),
    );
    const [req] = exa.requests;
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/search");
    expect(req?.headers["x-api-key"]).toBe(KEY);
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(exa.bodies()[0]).toEqual({
      query: "llm agents survey",
      numResults: 2,
      type: "neural",
      contents: { highlights: { maxCharacters: 600 } },
      includeDomains: ["arxiv.org"],
    });
    expect(results.map((r) => r.url)).toEqual(["https://arxiv.org/abs/2307.06435", "https://lilianweng.github.io/posts/2023-06-23-agent/"]);
  });

  it("asks for page text instead of highlights when snippet_source is text", async () => {
    await provider({ snippet_source: "text", max_snippet_chars: 300, exclude_domains: ["example.com"] }).search!(
      "q",
      { maxResults: 1 },
      callContext(),
    );
    expect(exa.bodies()[0]).toEqual({
      query: "q",
      numResults: 1,
      type: "auto",
      contents: { text: { maxCharacters: 300 } },
      excludeDomains: ["example.com"],
    });
  });

  it("sends POST /contents with the URL and top-level text options for web_fetch", async () => {
    const page = await provider({ fetch_max_chars: 5000, max_age_hours: 0 }).fetch!(
      "https://lilianweng.github.io/posts/2023-06-23-agent/",
      callContext(),
    );
    expect(exa.requests[0]?.path).toBe("/contents");
    expect(exa.requests[0]?.headers["x-api-key"]).toBe(KEY);
    expect(exa.bodies()[0]).toEqual({
      urls: ["https://lilianweng.github.io/posts/2023-06-23-agent/"],
      text: { maxCharacters: 5000 },
      maxAgeHours: 0,
    });
    expect(page.format).toBe("markdown");
    expect(page.content).toContain("## Agent System Overview");
  });

  it("reports a page Exa could not crawl with its tag", async () => {
    await expect(provider().fetch!("https://example.com/missing", callContext())).rejects.toThrow(
      "exa could not fetch https://example.com/missing: CRAWL_NOT_FOUND (the page answered HTTP 404)",
    );
  });

  it("fails without a request when no key is configured, naming EXA_API_KEY", async () => {
    const error = await provider({}, {}).fetch!("https://example.com/", callContext()).catch((e: unknown) => e);
    expect(isAntlerError(error)).toBe(true);
    expect((error as Error).message).toContain("EXA_API_KEY");
    expect(exa.requests).toHaveLength(0);
  });

  it("turns Exa's 401 for a wrong key into WebProviderHttpError 401 with Exa's tag", async () => {
    const error = (await provider({}, { EXA_API_KEY: "wrong" }).search!("q", { maxResults: 1 }, callContext()).catch(
      (e: unknown) => e,
    )) as WebProviderHttpError;
    expect(error).toBeInstanceOf(WebProviderHttpError);
    expect(error.status).toBe(401);
    expect(error.body).toContain("INVALID_API_KEY");
  });
});
