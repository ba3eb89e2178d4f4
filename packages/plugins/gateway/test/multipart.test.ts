import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { receiveMultipart } from "../src/multipart.js";
import { tempDir } from "./fixtures.js";

const BOUNDARY = "b0undary-x";
const LIMITS = { maxFileBytes: 64 * 1024, maxFiles: 4, maxRequestBytes: 1024 * 1024 };

function form(parts: Array<{ name: string; filename?: string; body: string | Buffer }>): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? "" : `; filename="${part.filename}"`}`;
    pieces.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n\r\n`), Buffer.from(part.body), Buffer.from("\r\n"));
  }
  pieces.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(pieces);
}

/** The body in pieces of `size` bytes, handed over without ever yielding to I/O (as a fast socket would). */
async function* inPieces(body: Buffer, size: number) {
  for (let at = 0; at < body.length; at += size) yield body.subarray(at, at + size);
}

describe("streaming multipart parser", () => {
  it("reads the same files whatever the chunk boundaries, including delimiters split across chunks", async () => {
    // Bodies that look like the delimiter's start, to trip a parser that flushes a partial match.
    const first = `line\r\n--${BOUNDARY.slice(0, 5)}\r\n-almost`;
    const second = Buffer.from([0, 13, 10, 45, 45, 255, 13]);
    const body = form([
      { name: "note", body: "a plain field" },
      { name: "files", filename: "a.txt", body: first },
      { name: "files", filename: "b.bin", body: second },
    ]);
    for (const size of [1, 2, 3, 7, 13, 64, body.length]) {
      const dir = tempDir();
      const result = await receiveMultipart(inPieces(body, size), {
        boundary: BOUNDARY,
        dir,
        fileFields: new Set(["files"]),
        limits: LIMITS,
      });
      expect({ size, count: result.fileCount, names: result.files.map((f) => f.filename) }).toEqual({
        size,
        count: 2,
        names: ["a.txt", "b.bin"],
      });
      expect(readFileSync(result.files[0]?.path as string, "utf8")).toBe(first);
      expect(readFileSync(result.files[1]?.path as string)).toEqual(second);
    }
  });

  it("a file over the limit while a write is still in flight is refused, its temp file removed, and nothing crashes", async () => {
    const dir = tempDir();
    const body = form([{ name: "files", filename: "big.bin", body: Buffer.alloc(LIMITS.maxFileBytes + 1, 1) }]);
    // 8 KiB pieces stay under the write stream's buffer, so each write is still pending when the next arrives.
    const refused = receiveMultipart(inPieces(body, 8 * 1024), { boundary: BOUNDARY, dir, fileFields: new Set(["files"]), limits: LIMITS });
    await expect(refused).rejects.toMatchObject({ status: 413, message: `big.bin is over the limit of ${LIMITS.maxFileBytes} bytes` });
    // Give a late write error the chance to surface: an unheard one would fail the run as an unhandled error.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readdirSync(dir)).toEqual([]);
  });

  it("files past maxFiles are counted but never written, and a body without its closing boundary is a 400", async () => {
    const dir = tempDir();
    const many = form(Array.from({ length: 6 }, (_, i) => ({ name: "files", filename: `f${i}.txt`, body: "x" })));
    const result = await receiveMultipart(inPieces(many, 5), { boundary: BOUNDARY, dir, fileFields: new Set(["files"]), limits: LIMITS });
    expect(result.fileCount).toBe(6);
    expect(result.files).toHaveLength(LIMITS.maxFiles);
    expect(readdirSync(dir)).toHaveLength(LIMITS.maxFiles);
    const cut = many.subarray(0, many.length - 10);
    const other = tempDir();
    await expect(
      receiveMultipart(inPieces(cut, 64), { boundary: BOUNDARY, dir: other, fileFields: new Set(["files"]), limits: LIMITS }),
    ).rejects.toMatchObject({ status: 400 });
    expect(existsSync(join(other)) ? readdirSync(other) : []).toEqual([]);
  });
});
