import type { AntlerTool } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { ToolMessage } from "@langchain/core/messages";
import type { ToolRuntime } from "@langchain/core/tools";
import { z } from "zod";
import { type EditorBridge, READ_EDITOR_FILE, WRITE_EDITOR_FILE } from "./editor-bridge.js";

const pathArg = z.string().min(1).describe("A path in the user's project: relative to the project folder, or absolute inside it.");

/** `read_editor_file`: a file as the user's editor has it (unsaved changes included), through ACP `fs/read_text_file`. */
export function readEditorFileTool(bridge: EditorBridge): AntlerTool {
  return defineTool({
    name: READ_EDITOR_FILE,
    description:
      "Read a text file from the user's project as their editor has it, unsaved changes included. " +
      "Use it for files in the project the user opened you on (not for files in your own sandbox).",
    schema: z.object({
      path: pathArg,
      line: z.number().int().positive().optional().describe("First line to read (1-based)."),
      limit: z.number().int().positive().optional().describe("How many lines to read."),
    }),
    run: async ({ path, line, limit }, runtime) => {
      const threadId = threadOf(runtime);
      const target = bridge.resolvePath(threadId, path);
      if (!target.ok) return refusal(runtime, READ_EDITOR_FILE, target.message);
      try {
        return await bridge.read(threadId, target.path, { line, limit });
      } catch (err) {
        return refusal(runtime, READ_EDITOR_FILE, `the editor could not read ${target.path}: ${errorText(err)}`);
      }
    },
  });
}

/** `write_editor_file`: writes a file through the user's editor (ACP `fs/write_text_file`), which shows the change. */
export function writeEditorFileTool(bridge: EditorBridge): AntlerTool {
  return defineTool({
    name: WRITE_EDITOR_FILE,
    description:
      "Write a text file in the user's project through their editor (it creates or replaces the whole file). " +
      "Read the file first when you change part of it.",
    schema: z.object({ path: pathArg, content: z.string().describe("The file's complete new content.") }),
    run: async ({ path, content }, runtime) => {
      const threadId = threadOf(runtime);
      const target = bridge.resolvePath(threadId, path);
      if (!target.ok) return refusal(runtime, WRITE_EDITOR_FILE, target.message);
      try {
        await bridge.write(threadId, target.path, content);
        return `Wrote ${target.path} (${content.length} characters) through the editor.`;
      } catch (err) {
        return refusal(runtime, WRITE_EDITOR_FILE, `the editor could not write ${target.path}: ${errorText(err)}`);
      }
    },
  });
}

function threadOf(runtime: ToolRuntime): string {
  const ctx = (runtime.context !== null && typeof runtime.context === "object" ? runtime.context : {}) as Record<string, unknown>;
  const id = ctx.thread_id ?? runtime.configurable?.thread_id;
  return typeof id === "string" ? id : "";
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function refusal(runtime: ToolRuntime, name: string, text: string): ToolMessage {
  return new ToolMessage({ content: `Error: ${text}`, name, tool_call_id: runtime.toolCallId ?? "", status: "error" });
}
