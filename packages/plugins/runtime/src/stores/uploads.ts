import { constants } from "node:fs";
import { copyFile, mkdir, readdir, stat, unlink } from "node:fs/promises";
import { extname, join } from "node:path";
import { AntlerError, type ThreadPaths, VIRTUAL_DIRS } from "@antler/kernel";
import { RuntimeErrorCodes } from "../errors.js";
import { mimeTypeFor } from "./artifacts.js";
import { conversionRecordName, readConversionRecord } from "./document-conversion.js";

export interface UploadRecord {
  filename: string;
  virtual_path: string;
  size: number;
  mime_type: string;
  /** The Markdown copy written beside a PDF/Office upload when `uploads.auto_convert_documents` is on. */
  markdown?: { virtual_path: string; size: number; truncated: boolean };
  /** Why a document upload has no Markdown copy (encrypted, damaged, ...); the upload itself is kept. */
  conversion_note?: string;
}

export interface SaveUploadOptions {
  /** Largest file accepted, in bytes. Default 50 MiB. */
  maxBytes?: number;
  /** Most files a thread's uploads folder may hold. Default 100. */
  maxFiles?: number;
  /** Name to store the file under instead of the source's own (sanitised the same way). */
  filename?: string;
}

export const DEFAULT_UPLOAD_MAX_BYTES = 50 * 1024 * 1024;
export const DEFAULT_UPLOAD_MAX_FILES = 100;
const MAX_NAME_BYTES = 200;
const MAX_SUFFIX = 10_000;

/**
 * A file name that is safe to create in the uploads folder: the last path part only (either separator),
 * no control characters, no leading dots (so nothing is hidden from the Uploads middleware) or spaces, and
 * bounded in length with its extension kept. Never empty.
 */
export function sanitizeUploadName(name: string): string {
  const base = name.split(/[/\\]/).pop() ?? "";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  let clean = base.replace(/[\u0000-\u001f\u007f]/g, "").trim();
  clean = clean.replace(/^[.\s]+/, "").replace(/[.\s]+$/, "");
  if (!clean) clean = "upload";
  if (Buffer.byteLength(clean) > MAX_NAME_BYTES) {
    const ext = extname(clean).slice(0, 16);
    let stem = clean.slice(0, clean.length - extname(clean).length);
    while (Buffer.byteLength(stem + ext) > MAX_NAME_BYTES) stem = stem.slice(0, -1);
    clean = (stem || "upload") + ext;
  }
  return clean;
}

function withSuffix(name: string, n: number): string {
  if (n === 0) return name;
  const ext = extname(name);
  return `${name.slice(0, name.length - ext.length)}-${n}${ext}`;
}

function uploadInvalid(message: string, sourcePath: string, hint: string, details: Record<string, unknown> = {}): AntlerError {
  return new AntlerError(RuntimeErrorCodes.UPLOAD_INVALID, message, {
    where: sourcePath,
    hint,
    details: { source: sourcePath, ...details },
  });
}

/**
 * Copies a local file into the thread's uploads folder and returns what the agent will see. Refuses folders,
 * missing or special files and files over the size cap before anything is copied, and never overwrites an
 * earlier upload: a name that is taken gets `-1`, `-2`, ... before its extension.
 */
export async function saveUpload(paths: ThreadPaths, sourcePath: string, options: SaveUploadOptions = {}): Promise<UploadRecord> {
  const maxBytes = options.maxBytes ?? DEFAULT_UPLOAD_MAX_BYTES;
  const maxFiles = options.maxFiles ?? DEFAULT_UPLOAD_MAX_FILES;
  const info = await stat(sourcePath).catch(() => null);
  if (!info) throw uploadInvalid(`upload source ${sourcePath} does not exist`, sourcePath, "Check the path of the file to upload.");
  if (info.isDirectory()) {
    throw uploadInvalid(
      `upload source ${sourcePath} is a directory`,
      sourcePath,
      "Upload files one by one, or archive the folder (zip/tar) first.",
    );
  }
  if (!info.isFile()) throw uploadInvalid(`upload source ${sourcePath} is not a regular file`, sourcePath, "Upload a regular file.");
  if (info.size > maxBytes) {
    throw uploadInvalid(
      `upload ${sourcePath} is ${info.size} bytes, over the limit of ${maxBytes}`,
      sourcePath,
      "Upload a smaller file, or raise the upload size limit.",
      { size: info.size, max_bytes: maxBytes },
    );
  }

  await mkdir(paths.uploads, { recursive: true });
  const existing = await listUploads(paths);
  if (existing.length >= maxFiles) {
    throw uploadInvalid(
      `thread ${paths.threadId} already holds ${existing.length} uploads (limit ${maxFiles})`,
      sourcePath,
      "Remove uploads that are no longer needed, or start a new thread.",
      { files: existing.length, max_files: maxFiles },
    );
  }

  const wanted = sanitizeUploadName(options.filename ?? sourcePath);
  for (let n = 0; n <= MAX_SUFFIX; n++) {
    const filename = withSuffix(wanted, n);
    const target = join(paths.uploads, filename);
    try {
      // COPYFILE_EXCL makes "is the name free?" and "take it" one step, so concurrent uploads never clobber.
      await copyFile(sourcePath, target, constants.COPYFILE_EXCL);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw uploadInvalid(`could not copy ${sourcePath}: ${(error as Error).message}`, sourcePath, "Check that the file is readable.");
    }
    const size = (await stat(target)).size;
    if (size > maxBytes) {
      // The source grew between the check and the copy.
      await unlink(target).catch(() => {});
      throw uploadInvalid(`upload ${sourcePath} is over the limit of ${maxBytes} bytes`, sourcePath, "Upload a smaller file.", {
        size,
        max_bytes: maxBytes,
      });
    }
    return { filename, virtual_path: `${VIRTUAL_DIRS.uploads}/${filename}`, size, mime_type: mimeTypeFor(filename) };
  }
  throw uploadInvalid(`too many uploads named like ${wanted}`, sourcePath, "Rename the file before uploading it.");
}

/**
 * The thread's uploads, by name; hidden files and folders are left out. A document's Markdown copy is listed with
 * its original (`markdown`), not as an upload of its own, so it never counts towards `uploads.max_files`.
 * Empty when nothing was uploaded.
 */
export async function listUploads(paths: ThreadPaths): Promise<UploadRecord[]> {
  let names: string[];
  try {
    names = await readdir(paths.uploads);
  } catch {
    return [];
  }
  const present = new Set(names);
  const out = new Map<string, UploadRecord>();
  for (const filename of names.sort()) {
    if (filename.startsWith(".")) continue;
    const info = await stat(join(paths.uploads, filename)).catch(() => null);
    if (!info?.isFile()) continue;
    out.set(filename, { filename, virtual_path: `${VIRTUAL_DIRS.uploads}/${filename}`, size: info.size, mime_type: mimeTypeFor(filename) });
  }
  for (const record of [...out.values()]) {
    const recordName = conversionRecordName(record.filename);
    if (!present.has(recordName)) continue;
    const outcome = await readConversionRecord(join(paths.uploads, recordName));
    if (outcome?.status === "failed") record.conversion_note = outcome.note;
    const md = outcome?.status === "converted" ? out.get(outcome.markdown) : undefined;
    if (outcome?.status === "converted" && md) {
      record.markdown = { virtual_path: md.virtual_path, size: md.size, truncated: outcome.truncated };
      out.delete(md.filename);
    }
  }
  return [...out.values()];
}
