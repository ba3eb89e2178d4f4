import { ensureOk } from "./call.js";
import { DIRECT_PROVIDER } from "./config.js";
import type { WebFetchResult, WebSearchProvider } from "./contract.js";
import { extractPdfText, looksLikePdf } from "./pdf.js";

export interface DirectProviderOptions {
  /** Stop reading after this many bytes. Default 2 MB. */
  readonly maxResponseBytes?: number | undefined;
  readonly userAgent?: string | undefined;
  /** Pages of a PDF that are read. Default 50. */
  readonly maxPdfPages?: number | undefined;
}

const TEXT_TYPES = /^(text\/|application\/(json|xml|xhtml\+xml|ld\+json|rss\+xml|atom\+xml|javascript)\b)/i;

/** Reads a body up to `maxBytes`, then cancels the rest of the download. */
export async function readCapped(response: Response, maxBytes: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      await reader.cancel().catch(() => undefined);
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, truncated };
}

function charsetOf(contentType: string, head: Uint8Array): string {
  const fromHeader = /charset\s*=\s*"?([\w-]+)/i.exec(contentType)?.[1];
  if (fromHeader) return fromHeader;
  // <meta charset="..."> or http-equiv within the first KB of an HTML page.
  const sniff = new TextDecoder("latin1").decode(head.subarray(0, 1024));
  return /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(sniff)?.[1] ?? "utf-8";
}

function decode(bytes: Uint8Array, charset: string): string {
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}

/**
 * The keyless `direct` fetch provider: a GET through the guarded fetch (SSRF check on every hop), at most
 * `maxResponseBytes` read, decoded by its charset. HTML is returned as-is for the tool layer to extract.
 */
export function createDirectProvider(options: DirectProviderOptions = {}): WebSearchProvider {
  const maxBytes = options.maxResponseBytes ?? 2 * 1024 * 1024;
  const userAgent = options.userAgent ?? "Mozilla/5.0 (compatible; AntlerWebFetch/0.1)";
  const maxPdfPages = options.maxPdfPages ?? 50;
  return {
    name: DIRECT_PROVIDER,
    async fetch(url, ctx): Promise<WebFetchResult> {
      const response = await ensureOk(
        DIRECT_PROVIDER,
        await ctx.fetch(url, {
          method: "GET",
          headers: {
            "user-agent": userAgent,
            accept: "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,application/pdf;q=0.8,*/*;q=0.5",
            "accept-language": "en;q=1, *;q=0.5",
          },
          signal: ctx.signal,
        }),
      );
      const contentType = response.headers.get("content-type") ?? "";
      const mime = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
      const finalUrl = response.url || url;
      if (mime === "application/pdf" || mime === "application/x-pdf" || mime === "application/octet-stream") {
        const { bytes, truncated } = await readCapped(response, maxBytes);
        if (looksLikePdf(bytes)) return readPdf(finalUrl, bytes, truncated, maxBytes, maxPdfPages);
        if (mime !== "application/octet-stream") throw new Error(`${url} says it is a PDF but is not one (it does not start with %PDF-)`);
        throw new Error(`${url} is application/octet-stream, not a text, HTML or PDF document; web_fetch reads those only`);
      }
      if (mime !== "" && !TEXT_TYPES.test(mime)) {
        await response.body?.cancel().catch(() => undefined);
        throw new Error(`${url} is ${mime}, not a text, HTML or PDF document; web_fetch reads those only`);
      }
      const { bytes } = await readCapped(response, maxBytes);
      if (mime === "" && looksLikePdf(bytes)) return readPdf(finalUrl, bytes, false, maxBytes, maxPdfPages);
      const text = decode(bytes, charsetOf(contentType, bytes));
      const isHtml = mime === "" ? /<html|<body|<!doctype html/i.test(text.slice(0, 2048)) : /html/.test(mime);
      if (isHtml) return { url: finalUrl, content: text, format: "html" };
      return { url: finalUrl, content: text, format: mime === "text/markdown" ? "markdown" : "text" };
    },
  };
}

/** A PDF's text as Markdown, one section per page. A PDF cut off at the byte cap cannot be parsed: it says so. */
async function readPdf(url: string, bytes: Uint8Array, truncated: boolean, maxBytes: number, maxPages: number): Promise<WebFetchResult> {
  if (truncated) {
    throw new Error(
      `${url} is a PDF larger than direct.max_response_bytes (${maxBytes} bytes); a cut-off PDF cannot be read. Raise the limit or use a fetch provider that converts PDFs`,
    );
  }
  let pdf: Awaited<ReturnType<typeof extractPdfText>>;
  try {
    pdf = await extractPdfText(bytes, { maxPages });
  } catch (error) {
    throw new Error(`${url} is a PDF that could not be read: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const body = pdf.pages.map((text, i) => `## Page ${i + 1}\n\n${text || "(no text layer on this page)"}`).join("\n\n");
  const more = pdf.pageCount > pdf.pages.length ? `\n\n(${pdf.pageCount - pdf.pages.length} more pages not read)` : "";
  return { url, title: pdf.title, content: `${body}${more}`, format: "markdown" };
}
