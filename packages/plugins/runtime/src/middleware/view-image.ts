import { createHash } from "node:crypto";
import { type MiddlewareSpec, threadPaths, type VIRTUAL_DIRS } from "@antler/kernel";
import { HumanMessage, type MessageContent } from "@langchain/core/messages";
import type { ViewedImage } from "../state.js";
import { type LiveSandboxLookup, liveSandbox, rereadThreadFile, type ThreadFileRead } from "../tools/sandbox-files.js";
import { runIdentity } from "./thread-data.js";

/** Every folder of the thread: the tool decided what may be viewed; this only shows it. */
const VIEWABLE: readonly (keyof typeof VIRTUAL_DIRS)[] = ["workspace", "uploads", "outputs"];

export interface ViewImageOptions {
  /** Data folder holding `users/<user>/threads/<thread>/user-data`. */
  baseDir: string;
  /** Images larger than this are not sent (providers cap image size well below it). Default 20 MiB. */
  maxImageBytes?: number | undefined;
  /** Finds the run's live sandbox: images viewed from it are shown from it while its generation lives. */
  sandbox?: LiveSandboxLookup | undefined;
}

type ContentBlocks = Exclude<MessageContent, string>;

function viewedImagesOf(value: unknown): [string, ViewedImage][] {
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value as Record<string, ViewedImage>);
}

/**
 * Builds the one user message that shows the viewed images: a text line naming their paths, then one
 * base64 data-URL `image_url` block per image. Files that cannot be shown are listed with the reason.
 */
export async function viewedImagesMessage(
  images: readonly [string, ViewedImage][],
  read: (virtualPath: string, info: ViewedImage) => Promise<ThreadFileRead>,
  maxImageBytes: number,
): Promise<HumanMessage> {
  const shown: string[] = [];
  const skipped: string[] = [];
  const blocks: ContentBlocks = [];
  for (const [virtualPath, info] of images) {
    const mime = typeof info.mime_type === "string" ? info.mime_type : "";
    if (!mime.startsWith("image/")) {
      skipped.push(`${virtualPath}: not an image (${mime || "unknown type"})`);
      continue;
    }
    let result: ThreadFileRead;
    try {
      result = await read(virtualPath, info);
    } catch {
      result = { ok: false, kind: "unreadable", reason: "" };
    }
    if (!result.ok) {
      // Only the virtual path goes into the note: the host path is the server's business.
      if (result.kind === "too_large") skipped.push(`${virtualPath}: too large to show (${result.size} bytes)`);
      else if (result.kind === "unverified") skipped.push(`${virtualPath}: ${result.reason}`);
      else skipped.push(`${virtualPath}: could not be read`);
      continue;
    }
    const bytes = result.bytes;
    if (bytes.length > maxImageBytes) {
      skipped.push(`${virtualPath}: too large to show (${bytes.length} bytes)`);
      continue;
    }
    if (typeof info.sha256 === "string" && createHash("sha256").update(bytes).digest("hex") !== info.sha256.toLowerCase()) {
      skipped.push(`${virtualPath}: changed after it was viewed; view it again`);
      continue;
    }
    shown.push(`${virtualPath} (${mime}, ${bytes.length} bytes)`);
    blocks.push({ type: "image_url", image_url: { url: `data:${mime};base64,${bytes.toString("base64")}` } });
  }
  const lines: string[] = [];
  if (shown.length > 0) lines.push(`The images you viewed, in this order:\n${shown.map((s) => `- ${s}`).join("\n")}`);
  if (skipped.length > 0) lines.push(`Not shown:\n${skipped.map((s) => `- ${s}`).join("\n")}`);
  return new HumanMessage({ content: [{ type: "text", text: lines.join("\n") }, ...blocks] });
}

/**
 * Lets a vision model see the images it asked for (state `viewed_images`, filled by `view_image`): the next
 * model request gets one extra user message with the image data. The message lives only in that request,
 * so base64 never lands in the checkpointed history; once the model has answered, `viewed_images` is cleared.
 */
export function viewImageMiddleware(options: ViewImageOptions): MiddlewareSpec {
  const maxImageBytes = options.maxImageBytes ?? 20 * 1024 * 1024;
  return {
    name: "ViewImage",
    async wrapModelCall(request, handler) {
      const images = viewedImagesOf(request.state.viewed_images);
      if (images.length === 0) return handler(request);
      const { userId, threadId } = runIdentity(request.runtime);
      const live = liveSandbox(options.sandbox, request.state, request.runtime.context);
      const read = async (virtualPath: string, info: ViewedImage): Promise<ThreadFileRead> => {
        if (!threadId) throw new Error("no thread id in this run");
        const paths = threadPaths(options.baseDir, userId, threadId);
        const generation = typeof info.generation === "string" ? info.generation : undefined;
        // The size limit is applied by the caller, with its own note; read a little past it to tell.
        return rereadThreadFile({ paths, virtualPath, allowed: VIEWABLE, live, generation, maxBytes: maxImageBytes + 1 });
      };
      const message = await viewedImagesMessage(images, read, maxImageBytes);
      return handler({ ...request, messages: [...request.messages, message] });
    },
    afterModel(state) {
      // The model has now seen them; `{}` clears (see mergeViewedImages), so later calls do not resend them.
      return viewedImagesOf(state.viewed_images).length > 0 ? { viewed_images: {} } : undefined;
    },
  };
}
