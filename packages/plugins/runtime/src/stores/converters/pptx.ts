import { posix } from "node:path";
import { type ConvertedDocument, type ConverterLimits, yieldToEventLoop } from "./types.js";

/** No single part of a presentation we read may inflate beyond this: guards against zip bombs. */
const MAX_PART_BYTES = 32 * 1024 * 1024;

type OrderedNode = Record<string, unknown>;

/**
 * The text of each slide as `## Slide N`, one line per paragraph, in presentation order (the order of
 * `p:sldIdLst`, not of the file names, so slide10 follows slide9). There is no maintained PPTX-to-Markdown
 * library for Node, so this reads the OOXML zip with fflate and the XML with fast-xml-parser.
 */
export async function pptxToMarkdown(bytes: Uint8Array, limits: ConverterLimits): Promise<ConvertedDocument> {
  const [{ unzipSync, strFromU8 }, { XMLParser }] = await Promise.all([import("fflate"), import("fast-xml-parser")]);
  const parts = unzipSync(bytes, {
    filter: (f) =>
      f.originalSize <= MAX_PART_BYTES &&
      (f.name === "ppt/presentation.xml" || f.name === "ppt/_rels/presentation.xml.rels" || /^ppt\/slides\/slide\d+\.xml$/.test(f.name)),
  });
  const text = (name: string) => (parts[name] ? strFromU8(parts[name]) : undefined);
  const presentation = text("ppt/presentation.xml");
  if (presentation === undefined) throw new Error("no ppt/presentation.xml: this is not a PowerPoint presentation");

  const plain = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "@_",
    isArray: (name) => name === "Relationship" || name === "p:sldId",
  });
  const targets = new Map<string, string>();
  const rels = plain.parse(text("ppt/_rels/presentation.xml.rels") ?? "<Relationships/>") as {
    Relationships?: { Relationship?: Array<Record<string, string>> };
  };
  for (const rel of rels.Relationships?.Relationship ?? []) {
    if (rel["@_Id"] && rel["@_Target"]) targets.set(rel["@_Id"], posix.normalize(posix.join("ppt", rel["@_Target"])));
  }
  const pres = plain.parse(presentation) as { "p:presentation"?: { "p:sldIdLst"?: { "p:sldId"?: Array<Record<string, string>> } } };
  let order = (pres["p:presentation"]?.["p:sldIdLst"]?.["p:sldId"] ?? [])
    .map((s) => targets.get(s["@_r:id"] ?? ""))
    .filter((name): name is string => name !== undefined && parts[name] !== undefined);
  if (order.length === 0) {
    const slideNumber = (name: string) => Number(/slide(\d+)\.xml$/.exec(name)?.[1]);
    order = Object.keys(parts)
      .filter((n) => n.startsWith("ppt/slides/"))
      .sort((a, b) => slideNumber(a) - slideNumber(b));
  }

  const ordered = new XMLParser({ preserveOrder: true, ignoreAttributes: true, parseTagValue: false, trimValues: false });
  const sections: string[] = [];
  let chars = 0;
  let read = 0;
  for (const [i, name] of order.slice(0, limits.maxUnits).entries()) {
    if (chars >= limits.maxChars) break;
    const paragraphs: string[] = [];
    collectParagraphs(ordered.parse(text(name) ?? "") as OrderedNode[], paragraphs);
    const body = paragraphs.map((p) => p.trim()).filter((p) => p !== "");
    const section = `## Slide ${i + 1}\n\n${body.length ? body.join("\n\n") : "_(no text on this slide)_"}`;
    sections.push(section);
    chars += section.length;
    read++;
    await yieldToEventLoop();
  }
  return { sections, read, total: order.length, unit: "slides" };
}

/** Walks the tree in document order: each `a:p` starts a paragraph, `a:t` adds text, `a:br` a line break. */
function collectParagraphs(nodes: OrderedNode[], out: string[], inParagraph = false, inText = false): void {
  for (const node of nodes) {
    for (const [tag, children] of Object.entries(node)) {
      if (tag === ":@") continue;
      if (tag === "#text") {
        if (inText && out.length > 0) out[out.length - 1] += String(children);
        continue;
      }
      if (!Array.isArray(children)) continue;
      if (tag === "a:p") {
        out.push("");
        collectParagraphs(children as OrderedNode[], out, true, false);
      } else if (tag === "a:br" && inParagraph) {
        out[out.length - 1] += "\n";
      } else {
        collectParagraphs(children as OrderedNode[], out, inParagraph, tag === "a:t");
      }
    }
  }
}
