import { createHook } from "node:async_hooks";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_USER_ID, threadPaths } from "@antler/kernel";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { AntlerClient } from "../src/client/client.js";
import { convertUploadedDocument } from "../src/stores/document-conversion.js";
import { saveUpload } from "../src/stores/uploads.js";
import { docxWith, pdfWithPages, pptxWith, xlsxWith } from "./documents.js";
import { tempDir } from "./fixtures.js";

const limits = { maxPages: 1000, maxMarkdownBytes: 16 * 1024 * 1024 };

/**
 * Counts the times `work` hands the event loop back (an `Immediate` or a `Timeout` made while it runs: a yield, not
 * an awaited read). A count, not a clock: a loaded machine makes the conversion slower but does not change how
 * often it yields, while a converter that holds the loop from start to end makes none.
 */
async function countYields(work: () => Promise<unknown>): Promise<number> {
  let yields = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === "Immediate" || type === "Timeout") yields += 1;
    },
  });
  hook.enable();
  try {
    await work();
  } finally {
    hook.disable();
  }
  return yields;
}

async function uploaded(name: string, bytes: Uint8Array | string) {
  const src = join(tempDir(), name);
  writeFileSync(src, bytes);
  const paths = threadPaths(tempDir(), "u1", "t1");
  const record = await saveUpload(paths, src);
  return { paths, record, file: join(paths.uploads, record.filename) };
}

describe("document conversion", () => {
  it("writes a PDF's text layer page by page to <name>.md beside the original", async () => {
    const { paths, record, file } = await uploaded("report.pdf", pdfWithPages(["Quarterly revenue grew", "Costs fell sharply"]));
    const result = await convertUploadedDocument(paths, record, limits);
    expect(result).toMatchObject({ status: "converted", markdown: { virtual_path: "/mnt/user-data/uploads/report.pdf.md" } });
    const md = readFileSync(`${file}.md`, "utf8");
    expect(md).toMatch(/## Page 1\s+Quarterly revenue grew\s+## Page 2\s+Costs fell sharply/);
    expect(existsSync(file)).toBe(true);
  });

  it("stops at max_pages and says in the Markdown that pages were left out", async () => {
    const { paths, record, file } = await uploaded("long.pdf", pdfWithPages(["one", "two", "three"]));
    const result = await convertUploadedDocument(paths, record, { ...limits, maxPages: 2 });
    const md = readFileSync(`${file}.md`, "utf8");
    expect(md).toContain("two");
    expect(md).not.toContain("## Page 3");
    expect(md).toMatch(/truncated: converted 2 of 3 pages.*uploads\.max_pages/);
    expect(result).toMatchObject({ status: "converted", markdown: { truncated: true } });
  });

  it("cuts the Markdown at max_markdown_bytes and says so at the end", async () => {
    const long = Array.from({ length: 200 }, (_, i) => `Paragraph number ${i} with some words.`);
    const { paths, record, file } = await uploaded("big.docx", docxWith("Big", long));
    await convertUploadedDocument(paths, record, { ...limits, maxMarkdownBytes: 1000 });
    const md = readFileSync(`${file}.md`, "utf8");
    expect(Buffer.byteLength(md)).toBeLessThanOrEqual(1000);
    expect(md).toMatch(/truncated at 1000 bytes.*uploads\.max_markdown_bytes/);
    expect(md).toContain("Paragraph number 0");
  });

  it("converts a Word document's heading and paragraphs to Markdown", async () => {
    const { paths, record, file } = await uploaded("memo.docx", docxWith("Budget memo", ["Spend less on coffee.", "Buy more tea."]));
    await convertUploadedDocument(paths, record, limits);
    const md = readFileSync(`${file}.md`, "utf8");
    expect(md).toMatch(/^# Budget memo$/m);
    expect(md).toContain("Spend less on coffee.");
    expect(md).toContain("Buy more tea.");
  });

  it("converts each sheet of a workbook to a Markdown table under the sheet's name", async () => {
    const xlsx = xlsxWith([
      {
        name: "Sales",
        rows: [
          ["Region", "Total"],
          ["North", 120],
          ["South", 80],
        ],
      },
      { name: "Staff", rows: [["Name"], ["Ada"]] },
    ]);
    const { paths, record, file } = await uploaded("numbers.xlsx", xlsx);
    await convertUploadedDocument(paths, record, limits);
    const md = readFileSync(`${file}.md`, "utf8");
    expect(md).toMatch(/## Sheet: Sales\s+\| Region \| Total \|\s+\| --- \| --- \|\s+\| North \| 120 \|\s+\| South \| 80 \|/);
    expect(md).toMatch(/## Sheet: Staff\s+\| Name \|\s+\| --- \|\s+\| Ada \|/);
  });

  it("converts a presentation's slides in presentation order, slide 10 after slide 2", async () => {
    const slides = Array.from({ length: 10 }, (_, i) => [`Title ${i + 1}`, `Point of slide ${i + 1}`]);
    const { paths, record, file } = await uploaded("deck.pptx", pptxWith(slides));
    await convertUploadedDocument(paths, record, limits);
    const md = readFileSync(`${file}.md`, "utf8");
    expect(md).toMatch(/## Slide 1\s+Title 1\s+Point of slide 1/);
    expect(md.indexOf("Point of slide 10")).toBeGreaterThan(md.indexOf("Point of slide 2"));
    expect(md.indexOf("## Slide 2")).toBeLessThan(md.indexOf("## Slide 3"));
  });

  it("never holds the event loop through a big presentation's conversion: it yields once per slide", async () => {
    const slides = Array.from({ length: 200 }, (_, i) => Array.from({ length: 100 }, (_, p) => `Slide ${i + 1} point ${p + 1}`));
    // The converter's first use loads its libraries; only a conversion is counted.
    const warm = await uploaded("warm.pptx", pptxWith([["warm"]]));
    await convertUploadedDocument(warm.paths, warm.record, limits);
    const { paths, record } = await uploaded("big.pptx", pptxWith(slides));
    const yields = await countYields(() => convertUploadedDocument(paths, record, limits));
    // A yield after each slide lets the loop serve others between slides; converting all slides in one go yields
    // never (its file reads are awaited, not yields).
    expect(yields).toBeGreaterThanOrEqual(slides.length);
  });

  it("never holds the event loop through a big PDF's conversion: it yields once per page", async () => {
    const pages = Array.from({ length: 150 }, (_, i) => `Page text ${i + 1}`);
    const warm = await uploaded("warm.pdf", pdfWithPages(["warm"]));
    await convertUploadedDocument(warm.paths, warm.record, limits);
    const { paths, record } = await uploaded("big.pdf", pdfWithPages(pages));
    const yields = await countYields(() => convertUploadedDocument(paths, record, limits));
    expect(yields).toBeGreaterThanOrEqual(pages.length);
  });

  it("keeps an encrypted PDF and records a note asking for an unprotected copy, with no Markdown", async () => {
    const { paths, record, file } = await uploaded("secret.pdf", pdfWithPages(["hidden"], { encrypted: true }));
    const result = await convertUploadedDocument(paths, record, limits);
    expect(result).toMatchObject({ status: "failed" });
    expect(result?.status === "failed" && result.note).toMatch(/password/i);
    expect(existsSync(file)).toBe(true);
    expect(existsSync(`${file}.md`)).toBe(false);
  });

  it("keeps a corrupt Word document and records a note saying it could not be read", async () => {
    const { paths, record, file } = await uploaded("broken.docx", "this is not a zip file at all");
    const result = await convertUploadedDocument(paths, record, limits);
    expect(result).toMatchObject({ status: "failed" });
    expect(result?.status === "failed" && result.note).toMatch(/could not be read as a Word document/);
    expect(existsSync(file)).toBe(true);
    expect(existsSync(`${file}.md`)).toBe(false);
  });

  it("says the file is password-protected when an Office upload is an OLE container, as encrypted OOXML is", async () => {
    const ole = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, ...new Array(504).fill(0)]);
    const { paths, record } = await uploaded("locked.xlsx", ole);
    const result = await convertUploadedDocument(paths, record, limits);
    expect(result?.status === "failed" && result.note).toMatch(/password-protected.*unprotected \.xlsx copy/);
  });

  it("never overwrites a file the user uploaded under the Markdown copy's name", async () => {
    const src = join(tempDir(), "memo.docx.md");
    writeFileSync(src, "my own notes");
    const { paths, record, file } = await uploaded("memo.docx", docxWith("Memo", ["Text."]));
    await saveUpload(paths, src);
    const result = await convertUploadedDocument(paths, record, limits);
    expect(result?.status === "failed" && result.note).toMatch(/memo\.docx\.md already exists/);
    expect(readFileSync(`${file}.md`, "utf8")).toBe("my own notes");
  });

  it("leaves files that are not documents alone", async () => {
    const { paths, record, file } = await uploaded("notes.txt", "plain text");
    expect(await convertUploadedDocument(paths, record, limits)).toBeUndefined();
    expect(existsSync(`${file}.md`)).toBe(false);
  });
});

describe("document uploads through AntlerClient", () => {
  const clients: AntlerClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
  });

  async function client(uploads: Record<string, unknown>) {
    const scripted = scriptedModelsPlugin({ m: [{ id: "a1", text: "Read it." }] });
    const c = await AntlerClient.create({
      config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false }, uploads },
      plugins: [scripted],
      cwd: tempDir(),
      env: {},
      discover: false,
    });
    clients.push(c);
    return { c, model: scripted.models };
  }

  it("announces the original and its Markdown to the model when auto_convert_documents is on", async () => {
    const { c, model } = await client({ auto_convert_documents: true });
    const src = join(tempDir(), "memo.docx");
    writeFileSync(src, docxWith("Budget memo", ["Spend less."]));
    const record = await c.uploadFile("docs", src);
    expect(record.markdown?.virtual_path).toBe("/mnt/user-data/uploads/memo.docx.md");
    await c.chat("summarise my memo", { threadId: "docs" });
    const note = String(model.get("m")?.calls[0]?.messages.at(-1)?.content);
    expect(note).toContain("/mnt/user-data/uploads/memo.docx (");
    expect(note).toContain("Markdown: /mnt/user-data/uploads/memo.docx.md");
    // The Markdown is announced with its original, not as an upload of its own.
    expect(note).not.toMatch(/^- \/mnt\/user-data\/uploads\/memo\.docx\.md/m);
  });

  it("announces why a broken document has no Markdown, and the upload still succeeds", async () => {
    const { c, model } = await client({ auto_convert_documents: true });
    const src = join(tempDir(), "secret.pdf");
    writeFileSync(src, pdfWithPages(["hidden"], { encrypted: true }));
    const record = await c.uploadFile("docs", src);
    expect(record.conversion_note).toMatch(/password/i);
    await c.chat("what is in it?", { threadId: "docs" });
    const note = String(model.get("m")?.calls[0]?.messages.at(-1)?.content);
    expect(note).toMatch(/\/mnt\/user-data\/uploads\/secret\.pdf \(\d+ bytes\); not converted to Markdown: .*password/i);
  });

  it("does not count a document's Markdown copy towards uploads.max_files", async () => {
    const { c } = await client({ auto_convert_documents: true, max_files: 2 });
    for (const name of ["a.docx", "b.docx"]) {
      const src = join(tempDir(), name);
      writeFileSync(src, docxWith(name, ["Text."]));
      expect((await c.uploadFile("docs", src)).markdown).toBeDefined();
    }
  });

  it("converts nothing by default, as DeerFlow's auto_convert_documents: false", async () => {
    const { c } = await client({});
    const src = join(tempDir(), "memo.docx");
    writeFileSync(src, docxWith("Budget memo", ["Spend less."]));
    const record = await c.uploadFile("docs", src);
    expect(record.markdown).toBeUndefined();
    const dir = threadPaths(c.kernel.paths.baseDir, DEFAULT_USER_ID, "docs").uploads;
    expect(readdirSync(dir)).toEqual(["memo.docx"]);
  });
});
