/** What `extractPdfText` read from a PDF. */
export interface PdfText {
  readonly title: string | undefined;
  /** The text of each page read, in order. */
  readonly pages: readonly string[];
  readonly pageCount: number;
}

/** Whether the bytes start like a PDF (`%PDF-`), for servers that send a generic content type. */
export function looksLikePdf(bytes: Uint8Array): boolean {
  return bytes.length >= 5 && bytes[0] === 0x25 && bytes[1] === 0x50 && bytes[2] === 0x44 && bytes[3] === 0x46 && bytes[4] === 0x2d;
}

/**
 * The text layer of a PDF, page by page, with Mozilla's pdf.js (loaded on first use, so kernels that never
 * fetch a PDF never load it). Scripts, fonts from the system and `eval` are all off: only text is read. A PDF
 * without a text layer (a scan) comes back with empty pages.
 */
export async function extractPdfText(bytes: Uint8Array, options: { maxPages: number }): Promise<PdfText> {
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  const task = pdfjs.getDocument({
    // pdf.js takes ownership of the buffer it is given; a copy keeps the caller's intact.
    data: bytes.slice(),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    enableXfa: false,
    verbosity: 0,
  });
  const doc = await task.promise;
  try {
    const meta = await doc.getMetadata().catch(() => undefined);
    const info = meta?.info as { Title?: unknown } | undefined;
    const title = typeof info?.Title === "string" && info.Title.trim() !== "" ? info.Title.trim() : undefined;
    const pages: string[] = [];
    const last = Math.min(doc.numPages, options.maxPages);
    for (let n = 1; n <= last; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let text = "";
      for (const item of content.items) {
        if (!("str" in item)) continue;
        text += item.str;
        if (item.hasEOL) text += "\n";
        else if (item.str !== "" && !item.str.endsWith(" ")) text += " ";
      }
      pages.push(
        text
          .replace(/[ \t]+\n/g, "\n")
          .replace(/\n{3,}/g, "\n\n")
          .trim(),
      );
      page.cleanup();
    }
    return { title, pages, pageCount: doc.numPages };
  } finally {
    await task.destroy().catch(() => undefined);
  }
}
