import { randomUUID } from "node:crypto";
import { type LoopbackReply, type LoopbackServer, type RecordedHttpRequest, startLoopbackServer } from "@antler/tools-web/testing";

/** Exa's error envelope. */
export function exaError(status: number, tag: string, error: string): LoopbackReply {
  return { status, body: { requestId: randomUUID().replace(/-/g, ""), error, tag } };
}

const COST = { total: 0.005, breakDown: [{ search: 0.005, contents: 0 }] };

/** A `/search` answer shaped like Exa's, with highlights (and text when asked). */
export function exaSearchBody(query: string, numResults: number): unknown {
  const results = [
    {
      id: "https://arxiv.org/abs/2307.06435",
      title: "A Comprehensive Overview of Large Language Models",
      url: "https://arxiv.org/abs/2307.06435",
      publishedDate: "2023-07-12T00:00:00.000Z",
      author: "Humza Naveed, Asad Ullah Khan",
      score: 0.3837,
      highlights: [
        "Large Language Models (LLMs) have recently demonstrated remarkable capabilities in natural language processing tasks.",
        "This article provides an overview of the existing literature on a broad range of LLM-related concepts.",
      ],
      highlightScores: [0.61, 0.42],
      text: "Abstract: Large Language Models (LLMs) have recently demonstrated remarkable capabilities...",
      favicon: "https://arxiv.org/favicon.ico",
    },
    {
      id: "https://lilianweng.github.io/posts/2023-06-23-agent/",
      title: null,
      url: "https://lilianweng.github.io/posts/2023-06-23-agent/",
      publishedDate: null,
      author: "Lilian Weng",
      highlights: [],
      text: "Building agents with LLM (large language model) as its core controller is a cool concept.\n\nSeveral proof-of-concepts demos...",
    },
    { id: "bad", title: "no url", highlights: ["dropped"] },
  ];
  return {
    requestId: "b5947044c4b78efa9552a7c89b306d95",
    resolvedSearchType: "neural",
    searchType: "auto",
    results: results.slice(0, numResults + 1),
    costDollars: COST,
    query,
  };
}

/** A `/contents` answer for each URL: success for known pages, Exa's per-URL error status for the rest. */
export function exaContentsBody(urls: string[]): unknown {
  const results: unknown[] = [];
  const statuses: unknown[] = [];
  for (const url of urls) {
    if (url.includes("missing")) {
      statuses.push({ id: url, status: "error", error: { tag: "CRAWL_NOT_FOUND", httpStatusCode: 404 } });
      continue;
    }
    if (url.includes("forbidden")) {
      statuses.push({ id: url, status: "error", error: { tag: "SOURCE_NOT_AVAILABLE", httpStatusCode: 403 } });
      continue;
    }
    results.push({
      id: url,
      url,
      title: "  Agents | Lil'Log  ",
      author: "Lilian Weng",
      publishedDate: "2023-06-23T00:00:00.000Z",
      text: "# LLM Powered Autonomous Agents\n\nBuilding agents with LLM as its core controller is a cool concept.\n\n## Agent System Overview\n\nPlanning, memory and tool use.",
    });
    statuses.push({ id: url, status: "success", error: null });
  }
  return { requestId: "c0ffee", results, statuses, costDollars: { total: 0.001 } };
}

export interface FakeExa extends LoopbackServer {
  readonly baseUrl: string;
  readonly bodies: () => Array<Record<string, unknown>>;
}

/** A loopback Exa API: checks `x-api-key` and the JSON body, answers /search and /contents. */
export async function startFakeExa(validKey: string): Promise<FakeExa> {
  const server = await startLoopbackServer((req: RecordedHttpRequest) => {
    if (!req.headers["x-api-key"]) return exaError(401, "INVALID_API_KEY", "Missing API key in x-api-key header");
    if (req.headers["x-api-key"] !== validKey) return exaError(401, "INVALID_API_KEY", "Invalid API key");
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.text) as Record<string, unknown>;
    } catch {
      return exaError(400, "INVALID_REQUEST_BODY", "Body is not valid JSON");
    }
    if (req.method === "POST" && req.path === "/search") {
      if (typeof body.query !== "string") return exaError(400, "INVALID_REQUEST_BODY", "query is required");
      return { status: 200, body: exaSearchBody(body.query, typeof body.numResults === "number" ? body.numResults : 10) };
    }
    if (req.method === "POST" && req.path === "/contents") {
      const urls = body.urls;
      if (!Array.isArray(urls) || urls.some((u) => typeof u !== "string"))
        return exaError(400, "INVALID_URLS", "urls must be a list of URLs");
      return { status: 200, body: exaContentsBody(urls as string[]) };
    }
    return exaError(404, "NOT_FOUND", `No route ${req.method} ${req.path}`);
  });
  return {
    ...server,
    baseUrl: server.url,
    bodies: () => server.requests.map((r) => JSON.parse(r.text) as Record<string, unknown>),
  };
}
