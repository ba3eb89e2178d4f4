import type { ConvertedDocument } from "./types.js";

/** A Word document as Markdown: mammoth maps the styles to HTML, Turndown writes that HTML as Markdown. */
export async function docxToMarkdown(bytes: Uint8Array): Promise<ConvertedDocument> {
  const [{ default: mammoth }, { default: TurndownService }] = await Promise.all([import("mammoth"), import("turndown")]);
  // Images would be inlined as base64 data URIs: the model cannot use them and they swamp the byte budget.
  const { value: html } = await mammoth.convertToHtml(
    { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
    { convertImage: mammoth.images.imgElement(async () => ({ src: "", alt: "image" })) },
  );
  const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
  turndown.remove("img");
  return { sections: [turndown.turndown(html).trim()] };
}
