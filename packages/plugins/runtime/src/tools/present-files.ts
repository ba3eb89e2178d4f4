import { posix } from "node:path";
import { type AntlerTool, type Sandbox, type ThreadPaths, VIRTUAL_DIRS } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import type { ToolRuntime } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import { type LiveSandboxLookup, liveSandbox, probeThreadFile } from "./sandbox-files.js";
import { type BuiltinToolOptions, readRunContext, resolveThreadScope, toolRefusal, toolReply } from "./tool-runtime.js";

export const PRESENT_FILES_TOOL_NAME = "present_files";

/** At most this many paths per call; more is almost certainly a mistake (a glob expanded into the call). */
const MAX_FILES = 50;

const OUTPUTS_ONLY = `only files under ${VIRTUAL_DIRS.outputs} can be presented; write the file there first`;

export const presentFilesSchema = z.object({
  filepaths: z
    .array(z.string().describe(`Absolute virtual path of one file, e.g. ${VIRTUAL_DIRS.outputs}/report.md.`))
    .min(1)
    .max(MAX_FILES)
    .describe(
      `The files to show the user, as absolute paths under ${VIRTUAL_DIRS.outputs}. Each must already exist and be a regular file (not a folder).`,
    ),
});

const DESCRIPTION = [
  "Make files you created visible to the user, who sees them as downloadable attachments of this conversation.",
  `Only files under ${VIRTUAL_DIRS.outputs} can be presented: write (or copy) the final deliverable there first, then call this tool with its absolute path.`,
  "Present finished results (reports, charts, documents, code archives), not scratch files. Presenting a file twice is harmless.",
].join("\n");

type Check = { ok: true; virtualPath: string } | { ok: false; virtualPath: string; reason: string };

async function checkPresentable(paths: ThreadPaths, virtualPath: string, live: Sandbox | undefined): Promise<Check> {
  if (!virtualPath.startsWith("/")) {
    return { ok: false, virtualPath, reason: `not an absolute path; use ${VIRTUAL_DIRS.outputs}/<name>` };
  }
  const resolved = posix.resolve(virtualPath);
  // A file made this turn in a remote sandbox is there, not yet on the host (outputs sync back at release).
  const probe = await probeThreadFile({ paths, virtualPath: resolved, allowed: ["outputs"], live });
  return probe.ok ? { ok: true, virtualPath: resolved } : { ok: false, virtualPath, reason: probe.reason };
}

/**
 * `present_files`: adds files of the thread's outputs folder to the `artifacts` state, which the UI lists as
 * attachments. All paths are checked before anything is presented, so a refused call changes nothing.
 */
export function createPresentFilesTool(options: BuiltinToolOptions & { sandbox?: LiveSandboxLookup | undefined }): AntlerTool {
  const { baseDir } = options;
  return defineTool({
    name: PRESENT_FILES_TOOL_NAME,
    description: DESCRIPTION,
    schema: presentFilesSchema,
    async run({ filepaths }, runtime: ToolRuntime) {
      const scope = resolveThreadScope(baseDir, readRunContext(runtime));
      if (!scope.ok) return toolRefusal(runtime, PRESENT_FILES_TOOL_NAME, `Cannot present files: ${scope.reason}`);

      const live = liveSandbox(options.sandbox, runtime.state, runtime.context);
      const checks = await Promise.all(filepaths.map((p) => checkPresentable(scope.paths, p, live)));
      const refused = checks.filter((c): c is Extract<Check, { ok: false }> => !c.ok);
      if (refused.length > 0) {
        const lines = refused.map((c) => `- ${JSON.stringify(c.virtualPath)}: ${c.reason}`);
        return toolRefusal(
          runtime,
          PRESENT_FILES_TOOL_NAME,
          `Nothing was presented. Refused ${refused.length} of ${checks.length} path(s):\n${lines.join("\n")}\n` +
            `Note: ${OUTPUTS_ONLY}, then call ${PRESENT_FILES_TOOL_NAME} again with its ${VIRTUAL_DIRS.outputs}/... path.`,
        );
      }

      const presented = [...new Set(checks.map((c) => c.virtualPath))];
      const message = toolReply(
        runtime,
        PRESENT_FILES_TOOL_NAME,
        `Presented ${presented.length} file(s) to the user:\n${presented.map((p) => `- ${p}`).join("\n")}`,
      );
      return new Command({ update: { artifacts: presented, messages: [message] } });
    },
  });
}
