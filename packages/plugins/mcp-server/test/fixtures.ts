// A distribution for the MCP server tests: a scripted model that echoes, continues a thread, writes and presents a
// report, or waits (to be cancelled), and a tool that writes the report into the thread's outputs folder.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { definePlugin, threadPaths } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { z } from "zod";

export const REPORT_PATH = "/mnt/user-data/outputs/report.md";
export const REPORT_TEXT = "# Report\n\nAntlers are bone.\n";

export function reportToolPlugin(baseDir: string) {
  return definePlugin({
    name: "report-tool",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.tools.add(
        defineTool({
          name: "write_report",
          description: "Writes the report to the outputs folder.",
          schema: z.object({ topic: z.string() }),
          run: async (_args, runtime) => {
            const context = (runtime as { context?: { thread_id?: string; user_id?: string } }).context ?? {};
            const paths = threadPaths(baseDir, context.user_id ?? "default", context.thread_id ?? "none");
            mkdirSync(paths.outputs, { recursive: true });
            writeFileSync(join(paths.outputs, "report.md"), REPORT_TEXT);
            return `wrote ${REPORT_PATH}`;
          },
        }),
      );
    },
  });
}

const humanTexts = (messages: BaseMessage[]) =>
  messages.filter((m) => m.getType() === "human").map((m) => (typeof m.content === "string" ? m.content : ""));

/**
 * "report": write_report, then present_files, then a short answer. "wait": an answer a minute away (to cancel).
 * Anything else: "You said: <text> (turn <n>)", n counting the thread's user messages, so a continued thread shows.
 */
export function script(messages: BaseMessage[]) {
  const last = messages[messages.length - 1];
  const texts = humanTexts(messages);
  const text = texts.at(-1) ?? "";
  if (last instanceof ToolMessage && last.name === "write_report") {
    return { toolCalls: [{ id: "call-present", name: "present_files", args: { filepaths: [REPORT_PATH] } }] };
  }
  if (last instanceof ToolMessage) return { text: "Here is the report." };
  if (last instanceof AIMessage) return { text: "?" };
  if (text.includes("report")) return { toolCalls: [{ id: "call-report", name: "write_report", args: { topic: "antlers" } }] };
  if (text.includes("wait")) return { text: "too late", delayMs: 60_000 };
  return { text: `You said: ${text} (turn ${texts.length})` };
}
