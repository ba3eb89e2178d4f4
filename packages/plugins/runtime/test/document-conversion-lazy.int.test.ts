import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { docxWith, pdfWithPages } from "./documents.js";
import { tempDir } from "./fixtures.js";

const run = promisify(execFile);
const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const CONVERTER_LIBRARIES = ["mammoth", "turndown", "pdfjs-dist", "read-excel-file", "fflate", "fast-xml-parser"];

/**
 * Uploads a DOCX and a PDF through the built AntlerClient in a fresh Node process, with a module hook that logs
 * every specifier resolved, and returns those that name a converter library.
 */
async function librariesLoaded(autoConvert: boolean): Promise<string[]> {
  const dir = tempDir();
  const log = join(dir, "resolved.log");
  writeFileSync(join(dir, "memo.docx"), docxWith("Memo", ["Text."]));
  writeFileSync(join(dir, "report.pdf"), pdfWithPages(["Text."]));
  writeFileSync(
    join(dir, "hooks.mjs"),
    `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  appendFileSync(${JSON.stringify(log)}, specifier + "\\n");
  return next(specifier, context);
}`,
  );
  writeFileSync(
    join(dir, "register.mjs"),
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(dir, "hooks.mjs")).href)});`,
  );
  writeFileSync(
    join(dir, "main.mjs"),
    `const { AntlerClient } = await import(${JSON.stringify(pathToFileURL(join(packageDir, "dist/index.js")).href)});
const client = await AntlerClient.create({
  config: { storage: { backend: "memory" }, title: { enabled: false }, uploads: { auto_convert_documents: ${autoConvert} } },
  cwd: ${JSON.stringify(dir)},
  env: {},
  discover: false,
});
await client.uploadFile("t1", ${JSON.stringify(join(dir, "memo.docx"))});
await client.uploadFile("t1", ${JSON.stringify(join(dir, "report.pdf"))});
await client.close();`,
  );
  await run(process.execPath, ["--import", pathToFileURL(join(dir, "register.mjs")).href, join(dir, "main.mjs")], {
    cwd: packageDir,
    timeout: 60_000,
  });
  const resolved = readFileSync(log, "utf8").split("\n");
  return CONVERTER_LIBRARIES.filter((lib) => resolved.some((s) => s === lib || s.startsWith(`${lib}/`)));
}

describe("document conversion libraries", () => {
  it("are never loaded when uploads.auto_convert_documents is off", async () => {
    expect(await librariesLoaded(false)).toEqual([]);
  }, 90_000);

  it("are loaded on first use when it is on (so the check above can see them)", async () => {
    expect(await librariesLoaded(true)).toEqual(expect.arrayContaining(["mammoth", "pdfjs-dist"]));
  }, 90_000);
});
