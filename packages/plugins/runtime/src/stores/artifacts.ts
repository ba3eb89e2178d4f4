import { readFile, stat } from "node:fs/promises";
import { extname } from "node:path";
import { AntlerError, resolveVirtualPath, type ThreadPaths, VIRTUAL_DIRS } from "@antler/kernel";
import { RuntimeErrorCodes } from "../errors.js";

const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  ".md": "text/markdown",
  ".txt": "text/plain",
  ".json": "application/json",
  ".csv": "text/csv",
  ".html": "text/html",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".svg": "image/svg+xml",
  ".pdf": "application/pdf",
};

export const DEFAULT_MIME_TYPE = "application/octet-stream";

/** The MIME type for a file name, by extension (case-insensitive); `application/octet-stream` when unknown. */
export function mimeTypeFor(filename: string): string {
  return MIME_BY_EXTENSION[extname(filename).toLowerCase()] ?? DEFAULT_MIME_TYPE;
}

export interface Artifact {
  bytes: Buffer;
  mimeType: string;
  size: number;
}

/**
 * Reads a file the agent produced or was given, by its virtual path under /mnt/user-data/{outputs,workspace,uploads}.
 * Anything else (other folders, `..` escapes, symlinks out of the thread) is PATH_UNSAFE; a missing file or a
 * folder is ARTIFACT_NOT_FOUND. Serving HTML or SVG to a browser is the caller's concern (send it as an
 * attachment or under a restrictive CSP): these bytes are whatever the agent wrote.
 */
export async function readArtifact(paths: ThreadPaths, virtualPath: string): Promise<Artifact> {
  const hostPath = resolveVirtualPath(paths, virtualPath, ["outputs", "workspace", "uploads"]);
  const info = await stat(hostPath).catch(() => null);
  if (!info?.isFile()) {
    throw new AntlerError(RuntimeErrorCodes.ARTIFACT_NOT_FOUND, `no file at ${virtualPath}`, {
      where: `thread ${paths.threadId}`,
      hint: `Artifacts are files under ${VIRTUAL_DIRS.outputs}, ${VIRTUAL_DIRS.workspace} or ${VIRTUAL_DIRS.uploads}; list the folder to see what exists.`,
      details: { virtual_path: virtualPath, ...(info ? { kind: "directory" } : {}) },
    });
  }
  const bytes = await readFile(hostPath);
  return { bytes, mimeType: mimeTypeFor(hostPath), size: bytes.byteLength };
}
