import { readFile, rename, writeFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { type ThreadPaths, VIRTUAL_DIRS } from "@antler/kernel";
import type { ConvertedDocument, ConverterLimits } from "./converters/types.js";

/** The document kinds converted to Markdown, by extension (lower case). */
export const CONVERTIBLE_EXTENSIONS = [".pdf", ".docx", ".xlsx", ".pptx"] as const;

const KIND_NAMES: Record<string, string> = {
  ".pdf": "a PDF",
  ".docx": "a Word document",
  ".xlsx": "an Excel workbook",
  ".pptx": "a PowerPoint presentation",
};

export interface DocumentConversionLimits {
  /** Most PDF pages, slides or sheets converted (`uploads.max_pages`). */
  maxPages: number;
  /** Largest Markdown written, in bytes (`uploads.max_markdown_bytes`). */
  maxMarkdownBytes: number;
}

export interface MarkdownCopy {
  filename: string;
  virtual_path: string;
  size: number;
  /** Pages/slides/sheets or bytes were left out; the Markdown says which at its end. */
  truncated: boolean;
}

export type DocumentConversion = { status: "converted"; markdown: MarkdownCopy } | { status: "failed"; note: string };

/** The outcome kept beside an upload, as the hidden conversion record holds it. */
export type ConversionRecord = { status: "converted"; markdown: string; truncated: boolean } | { status: "failed"; note: string };

/** The conversion record at `file`, or undefined when it is missing or not a record. */
export async function readConversionRecord(file: string): Promise<ConversionRecord | undefined> {
  return parseConversionRecord(await readFile(file, "utf8").catch(() => undefined));
}

export function parseConversionRecord(text: string | undefined): ConversionRecord | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const r = value as Partial<Record<"status" | "markdown" | "note", unknown>> & { truncated?: unknown };
  if (r?.status === "converted" && typeof r.markdown === "string")
    return { status: "converted", markdown: r.markdown, truncated: r.truncated === true };
  if (r?.status === "failed" && typeof r.note === "string") return { status: "failed", note: r.note };
  return undefined;
}

/** Where the outcome of a conversion is kept for the Uploads middleware: hidden, so it is never listed as an upload. */
export function conversionRecordName(filename: string): string {
  return `.${filename}.conversion.json`;
}

/** The Markdown copy's name: the original's full name plus `.md`, so `a.pdf` and `a.docx` never share one. */
export function markdownNameFor(filename: string): string {
  return `${filename}.md`;
}

export function isConvertibleDocument(filename: string): boolean {
  return (CONVERTIBLE_EXTENSIONS as readonly string[]).includes(extname(filename).toLowerCase());
}

/**
 * Converts an uploaded PDF, DOCX, XLSX or PPTX file to Markdown beside it (`report.pdf` → `report.pdf.md`),
 * bounded in pages and bytes, and records the outcome for the Uploads middleware. Never throws for a bad
 * document: an encrypted or broken file yields `{ status: "failed", note }` and the original stays as uploaded.
 * Returns undefined for files that are not documents. Each converter library is imported on first use only.
 */
export async function convertUploadedDocument(
  paths: ThreadPaths,
  upload: { filename: string },
  limits: DocumentConversionLimits,
): Promise<DocumentConversion | undefined> {
  const ext = extname(upload.filename).toLowerCase();
  if (!isConvertibleDocument(upload.filename)) return undefined;
  const source = join(paths.uploads, upload.filename);
  const mdName = markdownNameFor(upload.filename);
  let outcome: DocumentConversion;
  try {
    const bytes = new Uint8Array(await readFile(source));
    // Characters are at most 4 bytes and at least 1: collecting this many is always enough to fill the budget.
    const converterLimits: ConverterLimits = { maxUnits: limits.maxPages, maxChars: limits.maxMarkdownBytes + 1 };
    const doc = await convert(ext, bytes, converterLimits).catch((error: unknown) => {
      throw new ConversionFailed(failureNote(ext, bytes, error));
    });
    const { text, truncated } = renderMarkdown(upload.filename, doc, limits);
    const target = join(paths.uploads, mdName);
    try {
      // `wx`: a file the user uploaded under this name is never overwritten.
      await writeFile(target, text, { flag: "wx" });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") {
        throw new ConversionFailed(`${mdName} already exists in the uploads, so the Markdown copy was not written`);
      }
      throw error;
    }
    outcome = {
      status: "converted",
      markdown: { filename: mdName, virtual_path: `${VIRTUAL_DIRS.uploads}/${mdName}`, size: Buffer.byteLength(text), truncated },
    };
  } catch (error) {
    const note = error instanceof ConversionFailed ? error.message : `conversion failed: ${(error as Error).message}`;
    outcome = { status: "failed", note };
  }
  await writeConversionRecord(paths, upload.filename, outcome);
  return outcome;
}

class ConversionFailed extends Error {}

async function convert(ext: string, bytes: Uint8Array, limits: ConverterLimits): Promise<ConvertedDocument> {
  switch (ext) {
    case ".pdf":
      return (await import("./converters/pdf.js")).pdfToMarkdown(bytes, limits);
    case ".docx":
      return (await import("./converters/docx.js")).docxToMarkdown(bytes);
    case ".xlsx":
      return (await import("./converters/xlsx.js")).xlsxToMarkdown(bytes, limits);
    default:
      return (await import("./converters/pptx.js")).pptxToMarkdown(bytes, limits);
  }
}

const OLE_MAGIC = [0xd0, 0xcf, 0x11, 0xe0];

/** A sentence for the model: what went wrong with the document and what to do about it. */
function failureNote(ext: string, bytes: Uint8Array, error: unknown): string {
  const kind = KIND_NAMES[ext] ?? "a document";
  const name = (error as { name?: unknown })?.name;
  if (ext === ".pdf" && name === "PasswordException") {
    return "the PDF is password-protected; ask the user for an unprotected copy or the text itself";
  }
  if (ext !== ".pdf" && OLE_MAGIC.every((b, i) => bytes[i] === b)) {
    // Encrypted OOXML is wrapped in an OLE compound file; so are legacy .doc/.xls/.ppt files renamed.
    return `the file is password-protected (or an old binary Office file with a new extension); ask the user for an unprotected ${ext} copy`;
  }
  const reason = (error as Error)?.message ?? String(error);
  return `the file could not be read as ${kind} (${reason.slice(0, 200)}); it may be damaged, ask the user to re-export it`;
}

function renderMarkdown(filename: string, doc: ConvertedDocument, limits: DocumentConversionLimits): { text: string; truncated: boolean } {
  let text = `# ${filename}\n\n${doc.sections.join("\n\n")}\n`;
  let truncated = false;
  if (doc.read !== undefined && doc.total !== undefined && doc.read < doc.total) {
    truncated = true;
    const why = doc.read < limits.maxPages ? "uploads.max_markdown_bytes" : "uploads.max_pages";
    text += `\n_(truncated: converted ${doc.read} of ${doc.total} ${doc.unit}; raise ${why} to convert more)_\n`;
  }
  if (Buffer.byteLength(text) > limits.maxMarkdownBytes) {
    truncated = true;
    const marker = `\n\n_(truncated at ${limits.maxMarkdownBytes} bytes; raise uploads.max_markdown_bytes or read the original)_\n`;
    const room = Math.max(0, limits.maxMarkdownBytes - Buffer.byteLength(marker));
    // Cut on a UTF-8 character boundary: drop continuation bytes (10xxxxxx) left dangling at the cut.
    const bytes = Buffer.from(text);
    let end = room;
    while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
    text = bytes.subarray(0, end).toString("utf8") + marker;
  }
  return { text, truncated };
}

async function writeConversionRecord(paths: ThreadPaths, filename: string, outcome: DocumentConversion): Promise<void> {
  const record: ConversionRecord =
    outcome.status === "converted"
      ? { status: "converted", markdown: outcome.markdown.filename, truncated: outcome.markdown.truncated }
      : { status: "failed", note: outcome.note };
  const target = join(paths.uploads, conversionRecordName(filename));
  // Written whole then renamed, so the middleware never reads half a record.
  await writeFile(`${target}.tmp`, JSON.stringify(record));
  await rename(`${target}.tmp`, target);
}
