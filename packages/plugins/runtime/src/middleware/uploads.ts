import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type MiddlewareSpec, threadPaths, VIRTUAL_DIRS } from "@antler/kernel";
import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import { conversionRecordName, parseConversionRecord } from "../stores/document-conversion.js";
import { runIdentity } from "./thread-data.js";
import { turnPosition } from "./turn.js";

interface UploadedFile {
  filename: string;
  virtual_path: string;
  size: number;
  /** The Markdown copy of a converted document (`uploads.auto_convert_documents`). */
  markdown?: { virtual_path: string; size: number; truncated: boolean } | undefined;
  /** Why a document has no Markdown copy. */
  conversion_note?: string | undefined;
}

const RECENT_LISTINGS = 256;

const uploadedFile = z.object({
  filename: z.string(),
  virtual_path: z.string(),
  size: z.number(),
  markdown: z.object({ virtual_path: z.string(), size: z.number(), truncated: z.boolean() }).optional(),
  conversion_note: z.string().optional(),
});
/**
 * Per-turn bookkeeping: which turn was scanned (the id of its user message; a number in threads from before), the
 * folder's mtime then, and the files new in that turn.
 */
const uploadsTurnField = z
  .object({ turn: z.union([z.string(), z.number()]), dir_mtime: z.number(), fresh: z.array(uploadedFile) })
  .optional();

/**
 * Tells the model about files uploaded since the previous turn. The list goes into each model request of the
 * turn (a `<current_uploads>` note after the conversation), never into the message history, so the thread
 * stays exactly what the user and the model said. The folder is looked at (one `stat`) once per turn and read
 * only when its mtime changed; state is written only then. A thread nobody uploaded to has no folder at all.
 */
export function uploadsMiddleware(options: { baseDir: string }): MiddlewareSpec {
  // The last listing of recently used folders, by mtime: a thread whose state does not carry a scan (an empty
  // folder is never recorded, and agents without a checkpointer keep nothing) skips the readdir when its folder
  // did not change. Bounded, so idle threads cost no memory.
  const listings = new Map<string, { mtime: number; files: UploadedFile[] }>();
  const listing = (dir: string, mtime: number): UploadedFile[] => {
    const cached = listings.get(dir);
    if (cached?.mtime === mtime) return cached.files;
    const files = listFiles(dir);
    listings.delete(dir);
    if (listings.size >= RECENT_LISTINGS) listings.delete(listings.keys().next().value as string);
    listings.set(dir, { mtime, files });
    return files;
  };
  return {
    name: "Uploads",
    requires: ["ThreadData"],
    state: { _uploads: uploadsTurnField },
    async wrapModelCall(request, handler) {
      const { turn, answered } = turnPosition(request.state.messages);
      const tracked = request.state._uploads as z.output<typeof uploadsTurnField>;
      // The folder is looked at once per turn, before the turn's first model call (DeerFlow reads it once per
      // run too): later calls of the turn repeat what that look found, and a file that arrives mid-turn is
      // announced in the next turn.
      if (answered) return handler(withUploadsNote(request, tracked?.turn === turn ? tracked.fresh : []));
      const { userId, threadId } = runIdentity(request.runtime);
      if (!threadId) return handler(request);
      const dir = threadPaths(options.baseDir, userId, threadId).uploads;
      // Synchronous on purpose: one stat of a small folder costs microseconds, while the async form's thread-pool
      // round trip cost more than everything else this middleware does, on every model call.
      const dirMtime = statSync(dir, { throwIfNoEntry: false })?.mtimeMs ?? 0;
      const knownMtime = tracked?.dir_mtime ?? 0;
      if (dirMtime === knownMtime) {
        // Nothing arrived since the last scan: the files new in this turn (if the scan was this turn) still apply.
        return handler(withUploadsNote(request, tracked?.turn === turn ? tracked.fresh : []));
      }
      const files = listing(dir, dirMtime);
      const recorded = (request.state.uploaded_files as UploadedFile[] | undefined) ?? [];
      // An empty folder on a thread that never had uploads: nothing to tell the model, nothing to record.
      if (files.length === 0 && recorded.length === 0) return handler(request);
      const known = new Set(recorded.map((f) => f.virtual_path));
      const fresh = files.filter((f) => !known.has(f.virtual_path));
      await handler(withUploadsNote(request, fresh));
      return new Command({ update: { uploaded_files: files, _uploads: { turn, dir_mtime: dirMtime, fresh } } });
    },
  };
}

/**
 * Only runs when the folder changed; it holds at most `uploads.max_files` entries. A document's Markdown copy is
 * listed with its original (from the hidden conversion record), not as an upload of its own.
 */
function listFiles(dir: string): UploadedFile[] {
  let all: string[];
  try {
    all = readdirSync(dir);
  } catch {
    return [];
  }
  const present = new Set(all);
  const files = new Map<string, UploadedFile>();
  for (const filename of all.filter((n) => !n.startsWith(".")).sort()) {
    const info = statSync(join(dir, filename), { throwIfNoEntry: false });
    if (info?.isFile()) files.set(filename, { filename, virtual_path: `${VIRTUAL_DIRS.uploads}/${filename}`, size: info.size });
  }
  for (const file of [...files.values()]) {
    const recordName = conversionRecordName(file.filename);
    if (!present.has(recordName)) continue;
    const outcome = parseConversionRecord(readText(join(dir, recordName)));
    if (!outcome) continue;
    if (outcome.status === "failed") {
      file.conversion_note = outcome.note;
      continue;
    }
    const md = files.get(outcome.markdown);
    if (!md) continue;
    file.markdown = { virtual_path: md.virtual_path, size: md.size, truncated: outcome.truncated };
    files.delete(md.filename);
  }
  return [...files.values()];
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function announce(f: UploadedFile): string {
  const line = `- ${f.virtual_path} (${f.size} bytes)`;
  if (f.markdown) {
    const truncated = f.markdown.truncated ? ", truncated" : "";
    return `${line}; Markdown: ${f.markdown.virtual_path} (${f.markdown.size} bytes${truncated})`;
  }
  if (f.conversion_note) return `${line}; not converted to Markdown: ${f.conversion_note}`;
  return line;
}

function withUploadsNote<R extends { messages: unknown[] }>(request: R, fresh: readonly UploadedFile[]): R {
  if (fresh.length === 0) return request;
  const lines = fresh.map(announce).join("\n");
  const markdownHint = fresh.some((f) => f.markdown) ? " Where a Markdown copy is listed, read it rather than the original." : "";
  const note = new HumanMessage({
    content: `<current_uploads>\nThe user uploaded these files for this turn; read them with your file tools if they matter:${markdownHint}\n${lines}\n</current_uploads>`,
  });
  return { ...request, messages: [...request.messages, note] };
}
