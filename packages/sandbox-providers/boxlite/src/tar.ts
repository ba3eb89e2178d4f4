/**
 * The little of tar BoxLite's file API needs: one-file ustar archives to upload, and reading the archives it
 * sends back (ustar, with pax and GNU long names). Entries other than files, folders and symlinks are skipped.
 */

const BLOCK = 512;

export interface TarEntry {
  /** Path inside the archive, without a leading `./` or trailing `/`. */
  name: string;
  type: "file" | "dir" | "symlink";
  size: number;
  mtimeMs: number;
  bytes: Uint8Array;
}

function writeString(header: Uint8Array, offset: number, length: number, value: string): void {
  const bytes = new TextEncoder().encode(value);
  header.set(bytes.subarray(0, length), offset);
}

function writeOctal(header: Uint8Array, offset: number, length: number, value: number): void {
  writeString(
    header,
    offset,
    length,
    `${Math.floor(value)
      .toString(8)
      .padStart(length - 1, "0")}\0`,
  );
}

function headerBlock(name: string, size: number, type: string, mtimeMs: number, prefix = ""): Uint8Array {
  const header = new Uint8Array(BLOCK);
  writeString(header, 0, 100, name);
  writeOctal(header, 100, 8, type === "5" ? 0o755 : 0o644);
  writeOctal(header, 108, 8, 0);
  writeOctal(header, 116, 8, 0);
  writeOctal(header, 124, 12, size);
  writeOctal(header, 136, 12, mtimeMs / 1000);
  header.fill(0x20, 148, 156);
  writeString(header, 156, 1, type);
  writeString(header, 257, 6, "ustar\0");
  writeString(header, 263, 2, "00");
  writeString(header, 345, 155, prefix);
  let sum = 0;
  for (const byte of header) sum += byte;
  writeString(header, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return header;
}

function padded(bytes: Uint8Array): Uint8Array[] {
  const rest = bytes.byteLength % BLOCK;
  return rest === 0 ? [bytes] : [bytes, new Uint8Array(BLOCK - rest)];
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = body.length + 1;
  while (`${length}${body}`.length !== length) length = `${length}${body}`.length;
  return `${length}${body}`;
}

/** A tar archive of one regular file at `name` (a relative path). */
export function tarOneFile(name: string, bytes: Uint8Array, mtimeMs = Date.now()): Uint8Array {
  const parts: Uint8Array[] = [];
  const utf8 = new TextEncoder().encode(name);
  if (utf8.byteLength <= 100) {
    parts.push(headerBlock(name, bytes.byteLength, "0", mtimeMs));
  } else {
    // Long names go in a pax header, which every tar since POSIX.1-2001 reads.
    const pax = new TextEncoder().encode(paxRecord("path", name));
    parts.push(headerBlock("PaxHeader", pax.byteLength, "x", mtimeMs), ...padded(pax));
    parts.push(headerBlock(name.slice(-100).replace(/^[^/]*\//, ""), bytes.byteLength, "0", mtimeMs));
  }
  parts.push(...padded(bytes), new Uint8Array(BLOCK * 2));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

function readString(block: Uint8Array, offset: number, length: number): string {
  const slice = block.subarray(offset, offset + length);
  const end = slice.indexOf(0);
  return new TextDecoder().decode(end === -1 ? slice : slice.subarray(0, end));
}

function readOctal(block: Uint8Array, offset: number, length: number): number {
  const text = readString(block, offset, length).trim();
  return text === "" ? 0 : Number.parseInt(text, 8);
}

function cleanName(name: string): string {
  return name.replace(/^(\.\/)+/, "").replace(/\/+$/, "");
}

/** The entries of a tar archive. Throws on a corrupt header (bad checksum). */
export function readTar(archive: Uint8Array): TarEntry[] {
  const entries: TarEntry[] = [];
  let at = 0;
  let longName: string | undefined;
  while (at + BLOCK <= archive.byteLength) {
    const block = archive.subarray(at, at + BLOCK);
    if (block.every((b) => b === 0)) break;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (block[i] as number);
    if (sum !== readOctal(block, 148, 8)) throw new Error(`corrupt tar header at byte ${at}`);
    const size = readOctal(block, 124, 12);
    const type = readString(block, 156, 1) || "0";
    const body = archive.subarray(at + BLOCK, at + BLOCK + size);
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "x") {
      const text = new TextDecoder().decode(body);
      const path = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(text)?.[1];
      if (path !== undefined) longName = path;
      continue;
    }
    if (type === "L") {
      longName = readString(body, 0, body.byteLength);
      continue;
    }
    const prefix = readString(block, 345, 155);
    const name = cleanName(longName ?? (prefix ? `${prefix}/${readString(block, 0, 100)}` : readString(block, 0, 100)));
    longName = undefined;
    const kind = type === "0" || type === "7" ? "file" : type === "5" ? "dir" : type === "2" ? "symlink" : undefined;
    if (kind === undefined) continue;
    entries.push({
      name,
      type: kind,
      size: kind === "file" ? size : 0,
      mtimeMs: readOctal(block, 136, 12) * 1000,
      bytes: kind === "file" ? body : new Uint8Array(),
    });
  }
  return entries;
}
