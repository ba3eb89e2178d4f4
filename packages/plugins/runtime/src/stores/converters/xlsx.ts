import { type ConvertedDocument, type ConverterLimits, yieldToEventLoop } from "./types.js";

const ROWS_PER_SLICE = 500;

function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = value instanceof Date ? value.toISOString() : String(value);
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, "<br>");
}

/** Each sheet of a workbook as a Markdown table under `## Sheet: name`; the first row is the header. */
export async function xlsxToMarkdown(bytes: Uint8Array, limits: ConverterLimits): Promise<ConvertedDocument> {
  const { default: readXlsxFile } = await import("read-excel-file/node");
  const sheets = await readXlsxFile(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const sections: string[] = [];
  let chars = 0;
  let read = 0;
  for (const sheet of sheets.slice(0, limits.maxUnits)) {
    if (chars >= limits.maxChars) break;
    const rows = sheet.data;
    const width = rows.reduce((w, row) => Math.max(w, row.length), 0);
    const lines = [`## Sheet: ${sheet.sheet}`, ""];
    if (width === 0) lines.push("_(empty sheet)_");
    for (let r = 0; r < rows.length && chars < limits.maxChars; r++) {
      const cells = Array.from({ length: width }, (_, c) => cellText(rows[r]?.[c]));
      const line = `| ${cells.join(" | ")} |`;
      lines.push(line);
      chars += line.length + 1;
      if (r === 0) lines.push(`| ${Array.from({ length: width }, () => "---").join(" | ")} |`);
      if (r % ROWS_PER_SLICE === ROWS_PER_SLICE - 1) await yieldToEventLoop();
    }
    sections.push(lines.join("\n"));
    read++;
    await yieldToEventLoop();
  }
  return { sections, read, total: sheets.length, unit: "sheets" };
}
