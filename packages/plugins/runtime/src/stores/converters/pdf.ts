import { type ConvertedDocument, type ConverterLimits, yieldToEventLoop } from "./types.js";

/** The text layer of a PDF, one `## Page N` section per page, read with pdf.js one page at a time. */
export async function pdfToMarkdown(bytes: Uint8Array, limits: ConverterLimits): Promise<ConvertedDocument> {
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  const task = pdfjs.getDocument({
    data: bytes,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    enableXfa: false,
    verbosity: 0,
  });
  const doc = await task.promise;
  try {
    const sections: string[] = [];
    let chars = 0;
    const last = Math.min(doc.numPages, limits.maxUnits);
    let read = 0;
    for (let n = 1; n <= last && chars < limits.maxChars; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let text = "";
      for (const item of content.items) {
        if (!("str" in item)) continue;
        text += item.str;
        if (item.hasEOL) text += "\n";
        else if (item.str !== "" && !item.str.endsWith(" ")) text += " ";
      }
      const clean = text
        .replace(/[ \t]+\n/g, "\n")
        .replace(/\n{3,}/g, "\n\n")
        .trim();
      const section = `## Page ${n}\n\n${clean || "_(no text layer on this page: it may be a scan)_"}`;
      sections.push(section);
      chars += section.length;
      read = n;
      page.cleanup();
      await yieldToEventLoop();
    }
    return { sections, read, total: doc.numPages, unit: "pages" };
  } finally {
    await task.destroy().catch(() => undefined);
  }
}
