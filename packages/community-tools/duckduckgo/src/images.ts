import { capText, type ImageSearchResult, isHttpUrl } from "@antler/tools-web/provider";
import { z } from "zod";

/**
 * Where DuckDuckGo's image results page carries the `vqd` token, in the order tried: an attribute or JS string
 * (`vqd="4-…"`, `vqd='4-…'`), a query parameter inside a URL in the page's script (`…&vqd=4-…&…`, also
 * HTML-escaped as `&amp;`), and a JSON property (`"vqd":"4-…"`). The token is opaque; only the characters seen in
 * real tokens (digits, letters, `-`, `_`, `.`) are accepted, so a match never runs into markup.
 */
const VQD_PATTERNS: readonly RegExp[] = [
  /\bvqd\s*=\s*"([\w.-]{1,256})"/,
  /\bvqd\s*=\s*'([\w.-]{1,256})'/,
  /\bvqd=([\w.-]{1,256})&/,
  /"vqd"\s*:\s*"([\w.-]{1,256})"/,
];

/** The `vqd` token of an image results page, or undefined when the page has none (a refusal or a changed page). */
export function extractVqd(page: string): string | undefined {
  for (const pattern of VQD_PATTERNS) {
    const token = pattern.exec(page)?.[1];
    if (token) return token;
  }
  return undefined;
}

/** Whether a page is DuckDuckGo's bot challenge ("anomaly" modal) rather than the page asked for. */
export function isChallengePage(page: string): boolean {
  return /anomaly-modal|id="challenge-form"|\/anomaly\.js\?/.test(page);
}

/** The fields of an `i.js` result the provider reads; loose, so fields DuckDuckGo adds never fail a search. */
const imageResultSchema = z.looseObject({
  title: z.string().nullish(),
  /** The full-size image. */
  image: z.string().nullish(),
  /** A proxied thumbnail (usually Bing's). */
  thumbnail: z.string().nullish(),
  /** The page the image is on. */
  url: z.string().nullish(),
  width: z.union([z.number(), z.string()]).nullish(),
  height: z.union([z.number(), z.string()]).nullish(),
  /** The index the result came from ("Bing"): not a page, so not mapped. */
  source: z.string().nullish(),
});

export const duckduckgoImagesAnswerSchema = z.looseObject({
  results: z.array(z.unknown()).default([]),
  /** The relative URL of the next page (`i.js?…&s=100…`); one page is more than `max_results` allows. */
  next: z.string().nullish(),
});

export interface DuckDuckGoImageCaps {
  readonly maxResults: number;
  readonly maxTitleChars: number;
}

/** `//host/path` (protocol-relative, as DuckDuckGo writes some thumbnails) as https; anything else unchanged. */
function absolute(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  const trimmed = url.trim();
  return trimmed.startsWith("//") ? `https:${trimmed}` : trimmed;
}

function dimension(value: number | string | null | undefined): number | undefined {
  const n = typeof value === "string" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : undefined;
}

function hostnameOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).hostname || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Maps the JSON of `GET /i.js` to image results: `image` is the picture, `thumbnail` its preview, `url` the page
 * it is on. Entries without an http(s) image URL are dropped, an image is returned once, and titles are capped.
 */
export function mapDuckDuckGoImages(body: unknown, caps: DuckDuckGoImageCaps): ImageSearchResult[] {
  const parsed = duckduckgoImagesAnswerSchema.safeParse(body);
  if (!parsed.success) throw new Error(`duckduckgo answered i.js with an unexpected shape: ${parsed.error.message.slice(0, 300)}`);
  const out: ImageSearchResult[] = [];
  const seen = new Set<string>();
  for (const raw of parsed.data.results) {
    if (out.length >= caps.maxResults) break;
    const item = imageResultSchema.safeParse(raw);
    if (!item.success) continue;
    const imageUrl = absolute(item.data.image);
    if (!isHttpUrl(imageUrl) || seen.has(imageUrl)) continue;
    seen.add(imageUrl);
    const thumbnailUrl = absolute(item.data.thumbnail);
    const sourceUrl = absolute(item.data.url);
    const page = isHttpUrl(sourceUrl) ? sourceUrl : undefined;
    const title = (item.data.title ?? "").replace(/\s+/g, " ").trim();
    out.push({
      title: capText(title || hostnameOf(page) || imageUrl, caps.maxTitleChars),
      imageUrl,
      thumbnailUrl: isHttpUrl(thumbnailUrl) ? thumbnailUrl : undefined,
      sourceUrl: page,
      width: dimension(item.data.width),
      height: dimension(item.data.height),
    });
  }
  return out;
}
