import { createHash } from "node:crypto";
import { posix } from "node:path";
import { type AntlerTool, VIRTUAL_DIRS } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import type { ToolRuntime } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import { drainKey, type SandboxReadDrain } from "./read-drain.js";
import { type LiveSandboxLookup, liveSandbox, readThreadFile } from "./sandbox-files.js";
import { type BuiltinToolOptions, readRunContext, resolveThreadScope, runUserId, toolRefusal, toolReply } from "./tool-runtime.js";

export const VIEW_IMAGE_TOOL_NAME = "view_image";
export const DEFAULT_MAX_IMAGE_BYTES = 10 * 1024 * 1024;

export type ImageMimeType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** One entry of the `viewed_images` state, keyed by virtual path. */
export interface ViewedImageEntry {
  mime_type: ImageMimeType;
  size: number;
  /** Hex SHA-256 of the bytes that were checked, so whoever loads them later can tell if they changed. */
  sha256: string;
  /**
   * The sandbox generation the bytes came from (live, or synchronized from it). Until that generation is gone the
   * image is shown from it; after, only from a synchronized host copy that still has the recorded SHA-256.
   */
  generation?: string;
}

export interface ViewImageToolOptions extends BuiltinToolOptions {
  /** Largest image accepted, in bytes. Default 10 MB. */
  maxBytes?: number;
  /** Finds the run's live sandbox, so images made in a remote sandbox this turn can be viewed at once. */
  sandbox?: LiveSandboxLookup | undefined;
  /** Reads of the live sandbox register here, so a cancelled run's end waits for them before the sandbox is released. */
  drain?: SandboxReadDrain | undefined;
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
      const runContext = readRunContext(runtime);
      const scope = resolveThreadScope(baseDir, runContext);
      if (!scope.ok) return refuse(scope.reason);
      if (!image_path.startsWith("/")) return refuse(`not an absolute path; use a path under ${ALLOWED_LIST}.`);

      const virtualPath = posix.resolve(image_path);
      const live = liveSandbox(options.sandbox, runtime.state, runtime.context);
      const reading = readThreadFile({ paths: scope.paths, virtualPath, allowed: ALLOWED_DIRS, live, maxBytes });
      const read = await (live && options.drain && runContext.thread_id !== undefined
        ? options.drain.track(drainKey(runUserId(runContext), runContext.thread_id), reading)
        : reading);
      if (!read.ok) {
        if (read.kind === "too_large")
          return refuse(`the file is ${read.size} bytes; the limit is ${maxBytes} bytes (${maxMb}). Make a smaller copy first.`);
        if (read.kind === "not_file" && /folder/.test(read.reason)) return refuse("it is a folder, not an image file.");
        if (read.kind === "outside") return refuse(`${read.reason.replace(/\.$/, "")}. Only images under ${ALLOWED_LIST} can be viewed.`);
        return refuse(read.reason);
      }
      const bytes = read.bytes;

      const mimeType = sniffImageType(bytes);
      if (mimeType === undefined) {
        return refuse("the file is not a PNG, JPEG, GIF or WebP image (judged by its content, not its name).");
      }
      const entry: ViewedImageEntry = {
        mime_type: mimeType,
        size: bytes.length,
        sha256: createHash("sha256").update(bytes).digest("hex"),
        ...(read.generation !== undefined ? { generation: read.generation } : {}),
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
