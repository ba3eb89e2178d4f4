import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { z } from "zod";
import { threadPaths, VIRTUAL_DIRS } from "../paths.js";
import type { MiddlewareSpec } from "../pipeline/types.js";
import { runIdentity } from "./thread-data.js";

interface UploadedFile {
  filename: string;
  virtual_path: string;
  size: number;
}

const newUploadsField = z.array(z.object({ filename: z.string(), virtual_path: z.string(), size: z.number() })).optional();

/**
 * Tells the model about files uploaded since the previous turn. The list is added to the model request
 * (a `<current_uploads>` note after the conversation), never written into the message history, so the
 * checkpointed thread stays exactly what the user and the model said.
 */
export function uploadsMiddleware(options: { baseDir: string }): MiddlewareSpec {
  return {
    name: "Uploads",
    requires: ["ThreadData"],
    state: { _new_uploads: newUploadsField },
    async beforeAgent(state, runtime) {
      const { userId, threadId } = runIdentity(runtime);
      if (!threadId) return undefined;
      const dir = threadPaths(options.baseDir, userId, threadId).uploads;
      let names: string[];
      try {
        names = (await readdir(dir)).filter((n) => !n.startsWith("."));
      } catch {
        names = [];
      }
      const files: UploadedFile[] = [];
      for (const filename of names.sort()) {
        const info = await stat(join(dir, filename)).catch(() => null);
        if (info?.isFile()) files.push({ filename, virtual_path: `${VIRTUAL_DIRS.uploads}/${filename}`, size: info.size });
      }
      const known = new Set(((state.uploaded_files as UploadedFile[] | undefined) ?? []).map((f) => f.virtual_path));
      const fresh = files.filter((f) => !known.has(f.virtual_path));
      const previousFresh = (state._new_uploads as UploadedFile[] | undefined) ?? [];
      if (fresh.length === 0 && previousFresh.length === 0 && files.length === known.size) return undefined;
      return { uploaded_files: files, _new_uploads: fresh };
    },
    wrapModelCall(request, handler) {
      const fresh = (request.state._new_uploads as UploadedFile[] | undefined) ?? [];
      if (fresh.length === 0) return handler(request);
      const lines = fresh.map((f) => `- ${f.virtual_path} (${f.size} bytes)`).join("\n");
      const note = new HumanMessage({
        content: `<current_uploads>\nThe user uploaded these files for this turn; read them with your file tools if they matter:\n${lines}\n</current_uploads>`,
      });
      return handler({ ...request, messages: [...request.messages, note] });
    },
  };
}
