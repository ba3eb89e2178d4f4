import { randomUUID } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { finished } from "node:stream/promises";
import { GatewayErrorCodes, HttpError } from "./errors.js";
import { payloadTooLarge } from "./request-body.js";

export interface MultipartLimits {
  /** Bytes of one file. */
  readonly maxFileBytes: number;
  /** Files kept from one request; more are counted (for the message) but never written. */
  readonly maxFiles: number;
  /** Bytes of the whole body, boundaries and headers included. */
  readonly maxRequestBytes: number;
}

/** One file of the form, written to a hidden temp file; the caller moves it into place or removes it. */
export interface StagedFile {
  readonly field: string;
  /** The name the client gave (may be empty). */
  readonly filename: string;
  readonly path: string;
  readonly size: number;
}

export interface ReceivedForm {
  readonly files: StagedFile[];
  /** Every file part in the body, including those past `maxFiles`. */
  readonly fileCount: number;
}

const MAX_PART_HEADER_BYTES = 16 * 1024;
const CRLF = Buffer.from("\r\n");
const HEADER_END = Buffer.from("\r\n\r\n");

/** The boundary of a `multipart/form-data` content type, or `null`. */
export function multipartBoundary(contentType: string): string | null {
  if (!/^multipart\/form-data\s*(;|$)/i.test(contentType.trim())) return null;
  const match = contentType.match(/;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i);
  return match?.[1] ?? match?.[2] ?? null;
}

function malformed(message: string): HttpError {
  return new HttpError(
    400,
    GatewayErrorCodes.INVALID_REQUEST,
    `the multipart body could not be parsed: ${message}`,
    "Send multipart/form-data with the files in a field named `files`.",
  );
}

/** `name` and `filename` of a part's Content-Disposition (`filename` is `undefined` for a plain field). */
function parseDisposition(headerBlock: string): { name: string; filename: string | undefined } {
  const line = headerBlock.split("\r\n").find((l) => /^content-disposition\s*:/i.test(l));
  if (!line) throw malformed("a part has no Content-Disposition header");
  const params = new Map<string, string>();
  for (const m of line.matchAll(/;\s*([A-Za-z0-9_*-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g)) {
    const key = (m[1] ?? "").toLowerCase();
    const value = m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : (m[3] ?? "").trim();
    params.set(key, value);
  }
  let filename = params.get("filename");
  const extended = params.get("filename*")?.match(/^UTF-8''(.*)$/i)?.[1];
  if (extended !== undefined) {
    try {
      filename = decodeURIComponent(extended);
    } catch {
      // Not valid percent-encoding: keep the plain filename.
    }
  }
  return { name: params.get("name") ?? "", filename };
}

/** A temp file being written, with the first error its stream reported. */
interface StagedStream {
  readonly out: WriteStream;
  failure: Error | null;
}

/**
 * Opens a temp file whose stream errors never go unheard: a write still in flight when the upload is refused
 * fails after `destroy()`, and an `error` event without a listener would end the process. The error is kept
 * and raised by the next write or by the close instead.
 */
function openStaged(path: string): StagedStream {
  const staged: StagedStream = { out: createWriteStream(path, { flags: "wx" }), failure: null };
  staged.out.on("error", (error) => {
    staged.failure ??= error;
  });
  return staged;
}

async function writeChunk(staged: StagedStream, chunk: Buffer): Promise<void> {
  if (staged.failure) throw staged.failure;
  const { out } = staged;
  if (out.write(chunk)) return;
  await new Promise<void>((resolve, reject) => {
    const onDrain = () => {
      out.off("error", onError);
      resolve();
    };
    const onError = (error: Error) => {
      out.off("drain", onDrain);
      reject(error);
    };
    out.once("drain", onDrain);
    out.once("error", onError);
  });
}

async function closeStream(staged: StagedStream): Promise<void> {
  if (staged.failure) throw staged.failure;
  staged.out.end();
  await finished(staged.out);
}

/** Stops a temp file mid-write and removes it, once the stream has let go of the file. */
async function discardStaged(staged: StagedStream, path: string): Promise<void> {
  if (!staged.out.closed) {
    const closed = new Promise<void>((resolve) => staged.out.once("close", () => resolve()));
    staged.out.destroy();
    await closed;
  }
  await rm(path, { force: true });
}

/**
 * Parses a `multipart/form-data` body as it streams in and writes the parts of `fileFields` to hidden temp
 * files (`.upload-*.part`) in `dir`. Memory stays bounded by one chunk plus a boundary; every limit is checked
 * on the bytes as they arrive, and the first one passed stops reading with a 413 (sizes) or 400 (syntax). On any
 * failure the temp files written so far are removed.
 */
export async function receiveMultipart(
  chunks: AsyncIterable<Uint8Array>,
  options: { boundary: string; dir: string; fileFields: ReadonlySet<string>; limits: MultipartLimits },
): Promise<ReceivedForm> {
  const { limits } = options;
  // Every delimiter is CRLF "--" boundary; the first may come without the CRLF, so one is put in front.
  const delimiter = Buffer.from(`\r\n--${options.boundary}`);
  const files: StagedFile[] = [];
  let fileCount = 0;
  let buffer: Buffer = Buffer.from(CRLF);
  let total = 0;
  let state: "preamble" | "after-delimiter" | "headers" | "body" | "done" = "preamble";
  let part: { out: StagedStream | null; field: string; filename: string; path: string; size: number } | null = null;
  let dirReady = false;

  const finishPart = async () => {
    if (!part) return;
    const current = part;
    part = null;
    if (current.out) {
      await closeStream(current.out);
      files.push({ field: current.field, filename: current.filename, path: current.path, size: current.size });
    }
  };
  const bodyBytes = async (data: Buffer) => {
    if (!part || data.length === 0) return;
    part.size += data.length;
    if (part.out && part.size > limits.maxFileBytes) {
      const name = part.filename || "the file";
      throw payloadTooLarge(
        `${name} is over the limit of ${limits.maxFileBytes} bytes`,
        "Upload a smaller file, or raise uploads.max_file_bytes in config.yaml.",
        { max_bytes: limits.maxFileBytes, limit: "uploads.max_file_bytes", source: part.filename },
      );
    }
    if (part.out) await writeChunk(part.out, data);
  };

  try {
    for await (const chunk of chunks) {
      total += chunk.byteLength;
      if (total > limits.maxRequestBytes) {
        throw payloadTooLarge(
          `the upload request is over the limit of ${limits.maxRequestBytes} bytes`,
          "Send fewer or smaller files, or raise uploads.max_file_bytes / uploads.max_files in config.yaml.",
          { max_bytes: limits.maxRequestBytes, limit: "uploads.max_file_bytes × uploads.max_files" },
        );
      }
      buffer = buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([buffer, chunk]);
      for (;;) {
        if (state === "preamble") {
          const at = buffer.indexOf(delimiter);
          if (at === -1) {
            // Keep only what could still start a delimiter.
            buffer = buffer.subarray(Math.max(0, buffer.length - delimiter.length + 1));
            if (total > MAX_PART_HEADER_BYTES && files.length === 0 && fileCount === 0) throw malformed("no boundary found");
            break;
          }
          buffer = buffer.subarray(at + delimiter.length);
          state = "after-delimiter";
        } else if (state === "after-delimiter") {
          if (buffer.length < 2) break;
          if (buffer[0] === 0x2d && buffer[1] === 0x2d) {
            state = "done";
            break;
          }
          const eol = buffer.indexOf(CRLF);
          if (eol === -1) {
            if (buffer.length > 256) throw malformed("a boundary line does not end");
            break;
          }
          // Transport padding (spaces, tabs) may follow a boundary.
          if (buffer.subarray(0, eol).toString("latin1").trim() !== "") throw malformed("unexpected bytes after a boundary");
          buffer = buffer.subarray(eol + 2);
          state = "headers";
        } else if (state === "headers") {
          // A part without headers starts with the blank line right away.
          const end = buffer.subarray(0, 2).equals(CRLF) ? -2 : buffer.indexOf(HEADER_END);
          if (end === -1) {
            if (buffer.length > MAX_PART_HEADER_BYTES) throw malformed(`part headers over ${MAX_PART_HEADER_BYTES} bytes`);
            break;
          }
          const block = end === -2 ? "" : buffer.subarray(0, end).toString("utf8");
          buffer = buffer.subarray(end === -2 ? 2 : end + 4);
          const { name, filename } = parseDisposition(block);
          const isFile = filename !== undefined && options.fileFields.has(name);
          let out: StagedStream | null = null;
          let path = "";
          if (isFile) {
            fileCount += 1;
            if (fileCount <= limits.maxFiles) {
              if (!dirReady) {
                await mkdir(options.dir, { recursive: true });
                dirReady = true;
              }
              path = join(options.dir, `.upload-${randomUUID()}.part`);
              out = openStaged(path);
            }
          }
          part = { out, field: name, filename: filename ?? "", path, size: 0 };
          state = "body";
        } else if (state === "body") {
          const at = buffer.indexOf(delimiter);
          if (at === -1) {
            // Everything but a possible partial delimiter at the end is body.
            const keep = Math.min(buffer.length, delimiter.length - 1);
            await bodyBytes(buffer.subarray(0, buffer.length - keep));
            buffer = Buffer.from(buffer.subarray(buffer.length - keep));
            break;
          }
          await bodyBytes(buffer.subarray(0, at));
          buffer = buffer.subarray(at + delimiter.length);
          await finishPart();
          state = "after-delimiter";
        } else {
          break;
        }
      }
      // The epilogue after the closing boundary is ignored, but still counted against the request limit.
      if (state === "done") buffer = Buffer.alloc(0);
    }
    if (state !== "done") throw malformed("the body ended before the closing boundary");
    return { files, fileCount };
  } catch (error) {
    const open = part as { out: StagedStream | null; path: string } | null;
    if (open?.out) await discardStaged(open.out, open.path);
    await removeStaged(files);
    throw error;
  }
}

/** Removes staged temp files (after a failure, or once they were moved into place). */
export async function removeStaged(files: readonly StagedFile[]): Promise<void> {
  await Promise.all(files.map((f) => rm(f.path, { force: true })));
}
