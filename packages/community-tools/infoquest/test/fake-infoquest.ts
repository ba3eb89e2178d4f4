import { type LoopbackReply, type LoopbackServer, startLoopbackServer } from "@antler/tools-web/testing";

export function infoquestError(status: number, message: string): LoopbackReply {
  return { status, body: { error: { code: status, message } } };
}

/** A web search answer in InfoQuest's envelope: organic pages and top stories, inside `search_result.results[].content.results`. */
export function infoquestSearchBody(): unknown {
  return {
    search_result: {
      results: [
        {
          content: {
            results: {
              organic: [
                {
                  title: "Antler - Wikipedia",
                  url: "https://en.wikipedia.org/wiki/Antler",
                  desc: "Antlers are extensions of the skull\n grown by deer.",
                },
                { title: "Velvet antler", url: "https://www.britannica.com/science/antler", desc: "Antlers grow in velvet." },
                { title: "No URL", desc: "dropped" },
              ],
              top_stories: {
                items: [
                  {
                    title: "Record antlers found",
                    url: "https://news.example.com/record-antlers",
                    source: "Deer News",
                    time_frame: "2 hours ago",
                  },
                  { title: "Repeat", url: "https://en.wikipedia.org/wiki/Antler", source: "Wiki" },
                ],
              },
            },
          },
        },
      ],
    },
  };
}

export function infoquestImagesBody(): unknown {
  return {
    search_result: {
      results: [
        {
          content: {
            results: {
              images_results: [
                {
                  original: "https://upload.example.org/red-deer.jpg",
                  title: "Red deer stag",
                  url: "https://photos.example.org/red-deer",
                  thumbnail: "https://thumbs.example.org/red-deer.jpg",
                  width: 1600,
                  height: 1067,
                },
                { original: "https://upload.example.org/red-deer.jpg", title: "Same image again" },
                { original: "data:image/png;base64,AAAA", title: "inline, dropped" },
                { original: "https://upload.example.org/fallow.jpg", title: "Fallow deer" },
              ],
            },
          },
        },
      ],
    },
  };
}

export const READER_HTML =
  "<!doctype html><html><head><title>Antler growth</title></head><body><nav>Menu</nav><article><h1>Antler growth</h1><p>Antlers are shed and regrown every year.</p><p>They grow up to 2.5 cm a day.</p></article></body></html>";

export interface FakeInfoquest extends LoopbackServer {
  readonly searchUrl: string;
  readonly readerUrl: string;
}

/**
 * A loopback InfoQuest: `/search` stands for search.infoquest.bytepluses.com and `/reader` for
 * reader.infoquest.bytepluses.com. Both want POST, `Authorization: Bearer <key>` and a JSON body.
 */
export async function startFakeInfoquest(key: string): Promise<FakeInfoquest> {
  const server = await startLoopbackServer((req) => {
    if (req.method !== "POST") return infoquestError(405, "method not allowed");
    if (req.headers.authorization !== `Bearer ${key}`) return infoquestError(401, "invalid api key");
    const body = req.json as Record<string, unknown> | undefined;
    if (req.path === "/search") {
      if (typeof body?.query !== "string" || body.format !== "JSON") return infoquestError(400, "query and format are required");
      return { status: 200, body: body.search_type === "Images" ? infoquestImagesBody() : infoquestSearchBody() };
    }
    if (req.path === "/reader") {
      if (typeof body?.url !== "string") return infoquestError(400, "url is required");
      if (body.url.includes("blank")) return { status: 200, body: { reader_result: "" } };
      return { status: 200, body: { reader_result: READER_HTML } };
    }
    return infoquestError(404, "not found");
  });
  return { ...server, searchUrl: `${server.url}/search`, readerUrl: `${server.url}/reader` };
}
