import { type LoopbackReply, type LoopbackServer, type RecordedHttpRequest, startLoopbackServer } from "@antler/tools-web/testing";

/** Serper's error envelope. */
export function serperError(status: number, message: string): LoopbackReply {
  return { status, body: { message, statusCode: status } };
}

/** A `/search` answer shaped like Serper's (Google organic results, answer box, people-also-ask). */
export function serperSearchBody(q: string, num: number): unknown {
  return {
    searchParameters: { q, type: "search", num, engine: "google" },
    answerBox: {
      title: "Speed of light - Wikipedia",
      link: "https://en.wikipedia.org/wiki/Speed_of_light",
      snippet:
        "The speed of light in vacuum, commonly denoted c, is a universal physical constant exactly equal to 299,792,458 metres per second.",
      answer: "299,792,458 m/s",
    },
    knowledgeGraph: { title: "Speed of light", type: "Physical constant", attributes: { Value: "299,792,458 m/s" } },
    organic: [
      {
        title: "Speed of light - Wikipedia",
        link: "https://en.wikipedia.org/wiki/Speed_of_light",
        snippet: "The speed of light in vacuum, commonly denoted c, is a universal physical constant...",
        sitelinks: [{ title: "Faster-than-light", link: "https://en.wikipedia.org/wiki/Faster-than-light" }],
        position: 1,
      },
      {
        title: "How Fast Is the Speed of Light?  |  NASA",
        link: "https://science.nasa.gov/ems/speed-of-light/",
        snippet: "Light travels at a constant,\n finite speed of 186,000 mi/sec.",
        date: "Mar 3, 2024",
        position: 2,
      },
      { title: "no link", snippet: "dropped", position: 3 },
      {
        title: "Speed of light | Definition, Equation, Constant, & Facts",
        link: "https://www.britannica.com/science/speed-of-light",
        snippet: "speed of light, speed at which light waves propagate through different materials.",
        position: 4,
      },
    ],
    peopleAlsoAsk: [{ question: "Is anything faster than light?", snippet: "No.", link: "https://example.com/faq" }],
    relatedSearches: [{ query: "speed of light in km/s" }],
    credits: 1,
  };
}

/** An `/images` answer shaped like Serper's. */
export function serperImagesBody(q: string, num: number): unknown {
  return {
    searchParameters: { q, type: "images", num, engine: "google" },
    images: [
      {
        title: "Golden Gate Bridge at sunset",
        imageUrl: "https://upload.wikimedia.org/wikipedia/commons/0/0c/GoldenGateBridge-001.jpg",
        imageWidth: 2560,
        imageHeight: 1707,
        thumbnailUrl: "https://encrypted-tbn0.gstatic.com/images?q=tbn:ANd9GcR1",
        thumbnailWidth: 275,
        thumbnailHeight: 183,
        source: "Wikipedia",
        domain: "en.wikipedia.org",
        link: "https://en.wikipedia.org/wiki/Golden_Gate_Bridge",
        googleUrl: "https://www.google.com/imgres?imgurl=...",
        position: 1,
      },
      {
        title: "",
        imageUrl: "https://www.example.com/ggb.webp",
        source: "Example Travel",
        domain: "www.example.com",
        link: "https://www.example.com/golden-gate",
        position: 2,
      },
      { title: "data url", imageUrl: "data:image/png;base64,AAAA", position: 3 },
    ],
    credits: 1,
  };
}

export interface FakeSerper extends LoopbackServer {
  readonly baseUrl: string;
  readonly bodies: () => Array<Record<string, unknown>>;
}

/** A loopback Serper API: checks `X-API-KEY` and the JSON body, answers /search and /images. */
export async function startFakeSerper(validKey: string): Promise<FakeSerper> {
  const server = await startLoopbackServer((req: RecordedHttpRequest) => {
    if (req.headers["x-api-key"] !== validKey) return serperError(403, "Unauthorized.");
    if (req.method !== "POST") return serperError(405, "Method not allowed.");
    let body: { q?: unknown; num?: unknown };
    try {
      body = JSON.parse(req.text) as typeof body;
    } catch {
      return serperError(400, "Invalid JSON body.");
    }
    if (typeof body.q !== "string" || body.q === "") return serperError(400, "Query not allowed.");
    const num = typeof body.num === "number" ? body.num : 10;
    if (req.path === "/search") return { status: 200, body: serperSearchBody(body.q, num) };
    if (req.path === "/images") return { status: 200, body: serperImagesBody(body.q, num) };
    return serperError(404, "Not found.");
  });
  return {
    ...server,
    baseUrl: server.url,
    bodies: () => server.requests.map((r) => JSON.parse(r.text) as Record<string, unknown>),
  };
}
