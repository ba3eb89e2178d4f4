import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type AntlerTool, threadPaths, VIRTUAL_DIRS } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import { WEB_CAPTURE_TOOL_NAME } from "./names.js";
import type { BrowserSessionManager } from "./session-manager.js";
import { browserErrorText, browserScopeOf, toVirtualPath } from "./tools.js";

export { WEB_CAPTURE_TOOL_NAME };

export interface WebCaptureToolOptions {
  readonly manager: BrowserSessionManager;
  /** Antler's data folder; captures go to the thread's outputs folder under it. */
  readonly baseDir: string;
  /**
   * Whether the run's model can see images: then the capture is put in `viewed_images`, which the runtime's
   * ViewImage middleware shows on the next model call. Otherwise the model gets the title, URL and file only.
   */
  readonly showToModel: boolean;
}

const schema = z.object({
  url: z.string().min(1).max(8_000).describe("Absolute http(s) URL of the page to capture."),
  full_page: z.boolean().default(false).describe("Capture the whole scrollable page instead of the first screen."),
});

/**
 * `web_capture`: a read-only look at a page. It opens the URL in a fresh, guarded browser context (not the
 * conversation's browser session), saves a PNG of it to the thread's outputs as an attachment, and answers with
 * the page's title and final URL; nothing on the page is clicked or typed, and the context is closed afterwards.
 */
export function createWebCaptureTool(options: WebCaptureToolOptions): AntlerTool {
  const { manager, baseDir, showToModel } = options;
  const reply = (runtime: ToolRuntime, content: string, status: "success" | "error" = "success") =>
    new ToolMessage({ content, name: WEB_CAPTURE_TOOL_NAME, tool_call_id: runtime.toolCallId ?? "", status });
  return defineTool({
    name: WEB_CAPTURE_TOOL_NAME,
    description:
      `Look at a web page (http or https) without interacting with it: opens it in a fresh browser, saves a PNG screenshot into ${VIRTUAL_DIRS.outputs}/browser/ (shown to the user as an attachment), and returns the page's title and final URL (after redirects)` +
      (showToModel ? "; the screenshot is shown to you right after this call." : ".") +
      " Use it to see a page's layout, charts or images; to read its text use a fetch tool, to click or fill forms use the browser_* tools.",
    schema,
    async run({ url, full_page }, runtime: ToolRuntime) {
      const scope = browserScopeOf(runtime);
      if (!scope) {
        return reply(
          runtime,
          "Error: this run has no thread_id, so there is nowhere to save the capture. This is a host configuration problem; tell the user.",
          "error",
        );
      }
      try {
        const capture = await manager.capture(scope, url, { fullPage: full_page });
        const paths = threadPaths(baseDir, scope.userId, scope.threadId);
        const stamp = new Date().toISOString().replace(/[:.]/g, "-");
        const hostPath = join(paths.outputs, "browser", `capture-${stamp}.png`);
        await mkdir(dirname(hostPath), { recursive: true });
        await writeFile(hostPath, capture.png, { flag: "wx" });
        const virtualPath = toVirtualPath(paths, hostPath) ?? hostPath;
        const title = capture.title.trim() === "" ? "(no title)" : JSON.stringify(capture.title.trim().slice(0, 300));
        const text = [
          `Captured ${capture.url}`,
          `Title: ${title}`,
          `Screenshot: ${virtualPath} (PNG, ${capture.png.byteLength} bytes); the user can see it as an attachment.`,
          ...(showToModel ? ["The screenshot is attached to your next model call."] : []),
        ].join("\n");
        const viewed = showToModel
          ? {
              viewed_images: {
                [virtualPath]: {
                  mime_type: "image/png",
                  size: capture.png.byteLength,
                  sha256: createHash("sha256").update(capture.png).digest("hex"),
                },
              },
            }
          : {};
        return new Command({ update: { artifacts: [virtualPath], ...viewed, messages: [reply(runtime, text)] } });
      } catch (err) {
        return reply(runtime, `Error: ${browserErrorText(err)}`, "error");
      }
    },
  });
}
