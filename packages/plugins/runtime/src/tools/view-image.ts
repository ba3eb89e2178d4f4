import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { posix } from "node:path";
import { type AntlerTool, resolveVirtualPath, VIRTUAL_DIRS } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import type { ToolRuntime } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import { type BuiltinToolOptions, describeError, readRunContext, resolveThreadScope, toolRefusal, toolReply } from "./tool-runtime.js";

export const VIEW_IMAGE_TOOL_NAME = "view_image";
export const DEFAULT_MAX_IMAGE_BYTES = 10 * 1024 * 1024;

export type ImageMimeType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** One entry of the `viewed_images` state, keyed by virtual path. */
export interface ViewedImageEntry {
  mime_type: ImageMimeType;
  size: number;
  /** Hex SHA-256 of the bytes that were checked, so whoever loads them later can tell if they changed. */
  sha256: string;
}

export interface ViewImageToolOptions extends BuiltinToolOptions {
  /** Largest image accepted, in bytes. Default 10 MB. */
  maxBytes?: number;
}

/** The image format of some bytes, from their signature; the file name is not trusted. */
export function sniffImageType(bytes: Uint8Array): ImageMimeType | undefined {
  const at = (offset: number, signature: readonly number[]) => signature.every((b, i) => bytes[offset + i] === b);
  const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));
  if (at(0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (at(0, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (at(0, ascii("GIF87a")) || at(0, ascii("GIF89a"))) return "image/gif";
  if (at(0, ascii("RIFF")) && at(8, ascii("WEBP"))) return "image/webp";
  return undefined;
}

const ALLOWED_DIRS = ["workspace", "uploads", "outputs"] as const;
const ALLOWED_LIST = ALLOWED_DIRS.map((d) => VIRTUAL_DIRS[d]).join(", ");

export const viewImageSchema = z.object({
  image_path: z.string().describe(`Absolute virtual path of the image, under ${ALLOWED_LIST}; e.g. ${VIRTUAL_DIRS.uploads}/photo.jpg.`),
});

/**
 * `view_image` (vision models only): checks an image of the thread's folders and records it in `viewed_images`;
 * the ViewImage middleware then shows its bytes to the model on the next model call.
 */
export function createViewImageTool(options: ViewImageToolOptions): AntlerTool {
  const { baseDir } = options;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_IMAGE_BYTES;
  const maxMb = `${(maxBytes / (1024 * 1024)).toFixed(maxBytes % (1024 * 1024) === 0 ? 0 : 1)} MB`;
  return defineTool({
    name: VIEW_IMAGE_TOOL_NAME,
    description: [
      "Look at an image file. The image is shown to you right after this call, so you can describe or analyze it.",
      `The file must be a PNG, JPEG, GIF or WebP image of at most ${maxMb} under ${ALLOWED_LIST}.`,
      "Use it for images the user uploaded or that you generated; for other files use the file tools.",
    ].join("\n"),
    schema: viewImageSchema,
    async run({ image_path }, runtime: ToolRuntime) {
      const refuse = (why: string) => toolRefusal(runtime, VIEW_IMAGE_TOOL_NAME, `Cannot view ${JSON.stringify(image_path)}: ${why}`);
      const scope = resolveThreadScope(baseDir, readRunContext(runtime));
      if (!scope.ok) return refuse(scope.reason);
      if (!image_path.startsWith("/")) return refuse(`not an absolute path; use a path under ${ALLOWED_LIST}.`);

      let host: string;
      try {
        host = resolveVirtualPath(scope.paths, image_path, ALLOWED_DIRS);
      } catch (err) {
        return refuse(`${describeError(err)}. Only images under ${ALLOWED_LIST} can be viewed.`);
      }

      let bytes: Buffer;
      try {
        // Size and bytes come from one open handle, so a file swapped between the check and the read is not read past the cap.
        const handle = await open(host, "r");
        try {
          const info = await handle.stat();
          if (!info.isFile()) return refuse("it is not a regular file.");
          if (info.size === 0) return refuse("the file is empty.");
          if (info.size > maxBytes)
            return refuse(`the file is ${info.size} bytes; the limit is ${maxBytes} bytes (${maxMb}). Make a smaller copy first.`);
          bytes = await handle.readFile();
        } finally {
          await handle.close();
        }
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "ENOENT") return refuse("the file does not exist. Check the path (list the folder first).");
        if (code === "EISDIR") return refuse("it is a folder, not an image file.");
        return refuse(`the file could not be read (${describeError(err)}).`);
      }
      if (bytes.length > maxBytes) return refuse(`the file grew past the limit of ${maxBytes} bytes while it was read.`);

      const mimeType = sniffImageType(bytes);
      if (mimeType === undefined) {
        return refuse("the file is not a PNG, JPEG, GIF or WebP image (judged by its content, not its name).");
      }
      const virtualPath = posix.resolve(image_path);
      const entry: ViewedImageEntry = {
        mime_type: mimeType,
        size: bytes.length,
        sha256: createHash("sha256").update(bytes).digest("hex"),
      };
      const message = toolReply(
        runtime,
        VIEW_IMAGE_TOOL_NAME,
        `Loaded ${virtualPath} (${mimeType}, ${bytes.length} bytes). The image is attached to your next model call.`,
      );
      return new Command({ update: { viewed_images: { [virtualPath]: entry }, messages: [message] } });
    },
  });
}
