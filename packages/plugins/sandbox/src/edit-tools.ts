import { type AntlerTool, SANDBOX_VIRTUAL_ROOTS, type Sandbox } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import type { ToolRuntime } from "@langchain/core/tools";
import { z } from "zod";
import { descriptionArg, type SandboxToolOptions } from "./file-tools.js";
import { knownStamp, staleReadRefusal, stampContent } from "./read-stamps.js";
import type { SandboxLease } from "./registry.js";
import { errorText, openSession, readCurrent, refusal, reply } from "./tool-session.js";
import { normalizeVirtualPath, readOnlyRootOf } from "./virtual-path.js";

const OUTPUTS = SANDBOX_VIRTUAL_ROOTS.outputs;
const WORKSPACE = SANDBOX_VIRTUAL_ROOTS.workspace;

function readOnlyRefusal(runtime: ToolRuntime, tool: string, path: string): ReturnType<typeof refusal> | undefined {
  const root = readOnlyRootOf(path);
  if (root === undefined) return undefined;
  return refusal(
    runtime,
    tool,
    `${path} is under ${root}, which is read-only. Write to ${WORKSPACE} (scratch) or ${OUTPUTS} (deliverables) instead; copy the file there first to change it.`,
  );
}

/** Edits of one file are serialized per (sandbox, path), so two edits in one step cannot lose each other's change. */
function withFileLock<T>(options: SandboxToolOptions, lease: SandboxLease, path: string, work: () => Promise<T>): Promise<T> {
  return options.registry.locks.run(`${lease.sandbox.id}\u0000${path}`, work);
}

async function writeText(sandbox: Sandbox, path: string, content: string, append: boolean): Promise<void> {
  await sandbox.writeFile(path, content, append ? { append: true } : {});
}

export const writeFileSchema = z.object({
  description: descriptionArg,
  path: z
    .string()
    .min(1)
    .describe(`The file to write, e.g. ${WORKSPACE}/notes.md or ${OUTPUTS}/report.md. Missing parent folders are created.`),
  content: z.string().describe("The text to write. Without append it replaces the whole file."),
  append: z.boolean().optional().describe("Add `content` to the end of the file instead of replacing it. Default false."),
});

export function createWriteFileTool(options: SandboxToolOptions): AntlerTool {
  const { registry } = options;
  return defineTool({
    name: "write_file",
    description:
      `Create a text file, replace its content, or append to it. Put deliverables in ${OUTPUTS} and scratch work in ${WORKSPACE}. ` +
      "Replacing an existing file requires reading it with read_file first (and again after anything else changed it); prefer str_replace for small edits.",
    schema: writeFileSchema,
    async run({ path, content, append }, runtime) {
      const file = normalizeVirtualPath(path);
      const readOnly = readOnlyRefusal(runtime, "write_file", file);
      if (readOnly) return readOnly;
      const session = await openSession(registry, runtime, "write_file");
      if (!session.ok) return session.message;
      const { lease } = session;
      return withFileLock(options, lease, file, async () => {
        try {
          const current = await readCurrent(lease.sandbox, file);
          if (current.exists && !append) {
            const refused = staleReadRefusal("write_file", file, knownStamp(lease, runtime.state, file), current.content);
            if (refused) return refusal(runtime, "write_file", refused);
          }
          await writeText(lease.sandbox, file, content, append === true);
          if (!current.exists) {
            return reply(runtime, "write_file", `Created ${file} (${content.length} characters).`, stampContent(lease, file, content));
          }
          if (!append) {
            return reply(
              runtime,
              "write_file",
              `Replaced the content of ${file} (${content.length} characters).`,
              stampContent(lease, file, content),
            );
          }
          // An append keeps the thread's knowledge of the file only if it knew the content it appended to.
          const knewIt = staleReadRefusal("write_file", file, knownStamp(lease, runtime.state, file), current.content) === undefined;
          const text = `Appended ${content.length} characters to ${file}.`;
          return knewIt ? reply(runtime, "write_file", text, stampContent(lease, file, current.content + content)) : text;
        } catch (err) {
          return refusal(runtime, "write_file", `writing ${file} failed: ${errorText(err)}`);
        }
      });
    },
  });
}

/** Non-overlapping occurrences of `needle` in `haystack`. */
export function countOccurrences(haystack: string, needle: string): number {
  if (needle === "") return 0;
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

export const strReplaceSchema = z.object({
  description: descriptionArg,
  path: z.string().min(1).describe("The file to edit. It must exist, and this thread must have read its current content with read_file."),
  old_str: z
    .string()
    .min(1)
    .describe("The exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is true."),
  new_str: z.string().describe("The replacement text (may be empty to delete old_str)."),
  replace_all: z.boolean().optional().describe("Replace every occurrence of old_str instead of requiring exactly one. Default false."),
});

export function createStrReplaceTool(options: SandboxToolOptions): AntlerTool {
  const { registry } = options;
  return defineTool({
    name: "str_replace",
    description:
      "Edit a text file by replacing an exact piece of text. old_str must match exactly once (include surrounding lines to make it unique) " +
      "unless replace_all is true. Read the file with read_file first; edits of one file run one at a time.",
    schema: strReplaceSchema,
    async run({ path, old_str, new_str, replace_all }, runtime) {
      const file = normalizeVirtualPath(path);
      const readOnly = readOnlyRefusal(runtime, "str_replace", file);
      if (readOnly) return readOnly;
      const session = await openSession(registry, runtime, "str_replace");
      if (!session.ok) return session.message;
      const { lease } = session;
      return withFileLock(options, lease, file, async () => {
        try {
          const current = await readCurrent(lease.sandbox, file);
          if (!current.exists) return refusal(runtime, "str_replace", `${file} does not exist. Create it with write_file instead.`);
          const refused = staleReadRefusal("str_replace", file, knownStamp(lease, runtime.state, file), current.content);
          if (refused) return refusal(runtime, "str_replace", refused);
          const count = countOccurrences(current.content, old_str);
          if (count === 0) {
            return refusal(
              runtime,
              "str_replace",
              `old_str was not found in ${file} (0 matches). Copy the exact text from read_file output, including whitespace and indentation, and try again.`,
            );
          }
          if (count > 1 && replace_all !== true) {
            return refusal(
              runtime,
              "str_replace",
              `old_str matches ${count} times in ${file}; it must match exactly once. Include more surrounding text to make it unique, or set replace_all to true to replace all ${count}.`,
            );
          }
          // split/join and slicing, not String.replace: `$&` and friends in new_str must stay literal.
          const at = current.content.indexOf(old_str);
          const next =
            replace_all === true
              ? current.content.split(old_str).join(new_str)
              : `${current.content.slice(0, at)}${new_str}${current.content.slice(at + old_str.length)}`;
          await writeText(lease.sandbox, file, next, false);
          const replaced = replace_all === true ? count : 1;
          return reply(
            runtime,
            "str_replace",
            `Replaced ${replaced} occurrence${replaced === 1 ? "" : "s"} in ${file}.`,
            stampContent(lease, file, next),
          );
        } catch (err) {
          return refusal(runtime, "str_replace", `editing ${file} failed: ${errorText(err)}`);
        }
      });
    },
  });
}
