/**
 * Writes a small, valid PDF: one page per entry of `pages` (each line drawn with Helvetica), a document title,
 * and a cross-reference table with the byte offsets a strict reader checks.
 */
export function makePdf(pages: ReadonlyArray<readonly string[]>, title: string): Buffer {
  const pdfString = (text: string) => text.replace(/[\\()]/g, (c) => `\\${c}`);
  const objects: string[] = [];
  const pageCount = pages.length;
  const firstPage = 3;
  const font = firstPage + pageCount * 2;
  const info = font + 1;
  objects[1] = "<< /Type /Catalog /Pages 2 0 R >>";
  const kids = pages.map((_, i) => `${firstPage + i * 2} 0 R`).join(" ");
  objects[2] = `<< /Type /Pages /Kids [${kids}] /Count ${pageCount} >>`;
  pages.forEach((lines, i) => {
    const drawn = lines.map((line, j) => `BT /F1 12 Tf 72 ${720 - j * 18} Td (${pdfString(line)}) Tj ET`).join("\n");
    objects[firstPage + i * 2] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${firstPage + i * 2 + 1} 0 R /Resources << /Font << /F1 ${font} 0 R >> >> >>`;
    objects[firstPage + i * 2 + 1] = `<< /Length ${Buffer.byteLength(drawn, "latin1")} >>\nstream\n${drawn}\nendstream`;
  });
  objects[font] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";
  objects[info] = `<< /Title (${pdfString(title)}) >>`;
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  for (let n = 1; n < objects.length; n++) {
    offsets[n] = Buffer.byteLength(out, "latin1");
    out += `${n} 0 obj\n${objects[n]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, "latin1");
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let n = 1; n < objects.length; n++) out += `${String(offsets[n]).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R /Info ${info} 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}
