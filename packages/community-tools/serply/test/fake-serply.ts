import { type LoopbackReply, type LoopbackServer, type RecordedHttpRequest, startLoopbackServer } from "@antler/tools-web/testing";

/** Serply's error envelope. */
export function serplyError(status: number, message: string): LoopbackReply {
  return { status, body: { message } };
}

/** The form-encoded parameters of a Serply request path (`/v1/search/q=a+b&num=5`), or undefined for another path. */
export function serplyParams(request: RecordedHttpRequest): URLSearchParams | undefined {
  const match = /^\/v1\/search\/(.+)$/.exec(request.path);
  return match?.[1] === undefined ? undefined : new URLSearchParams(match[1]);
}

/** A search answer shaped like Serply's (Google organic results plus the fields Serply adds around them). */
export function serplySearchBody(q: string, num: number): unknown {
  return {
    searchParameters: { q, num },
    answers: [],
    results: [
      {
        title: "Antler - Wikipedia",
        link: "https://en.wikipedia.org/wiki/Antler",
        description: "Antlers are extensions of an animal's skull found in members of the Cervidae (deer) family.",
        additionalLinks: [{ text: "Antler - Wikipedia", href: "https://en.wikipedia.org/wiki/Antler" }],
        cite: { domain: "https://en.wikipedia.org › wiki › Antler", span: " › wiki › Antler" },
        realPosition: 1,
      },
      {
        title: "How  Deer Grow Antlers",
        link: "https://www.nwf.org/Magazines/National-Wildlife/2018/Oct-Nov/Animals/Deer-Antlers",
        description: "Antlers are the fastest-growing\n bone in the animal kingdom.",
        realPosition: 2,
      },
      { title: "Repeated", link: "https://en.wikipedia.org/wiki/Antler", description: "the same page again", realPosition: 3 },
      { title: "No link", description: "dropped", realPosition: 4 },
      { title: "Not http", link: "ftp://files.example.com/antlers.txt", description: "dropped", realPosition: 5 },
      {
        title: "Antler velvet | Britannica",
        link: "https://www.britannica.com/science/antler",
        description: "antler, paired bony structures on the head of members of the deer family.",
        realPosition: 6,
      },
    ].slice(0, Math.max(num + 3, 3)),
    total: 3,
    ts: 1.41,
    device_type: null,
  };
}

export interface FakeSerply extends LoopbackServer {
  /** The base URL to configure, including `/v1`. */
  readonly baseUrl: string;
}

/** A loopback Serply: checks the method, path and X-Api-Key, and answers like Serply does. */
export async function startFakeSerply(key: string): Promise<FakeSerply> {
  const server = await startLoopbackServer((req) => {
    if (req.method !== "GET") return serplyError(405, "Method Not Allowed");
    const params = serplyParams(req);
    if (!params) return serplyError(404, "Not Found");
    if (req.headers["x-api-key"] !== key) return serplyError(401, "Unauthorized");
    const q = params.get("q");
    if (!q) return serplyError(400, "Missing query");
    return { status: 200, body: serplySearchBody(q, Number(params.get("num") ?? 10)) };
  });
  return { ...server, baseUrl: `${server.url}/v1` };
}
