import { posix } from "node:path";
import { type AntlerTool, type FileEntry, SANDBOX_VIRTUAL_ROOTS } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { z } from "zod";
import type { SandboxToolLimits } from "./config.js";
import { truncateTail } from "./output.js";
import { stampContent } from "./read-stamps.js";
import type { SandboxRegistry } from "./registry.js";
import { errorText, openSession, readCurrent, refusal, reply } from "./tool-session.js";
import { normalizeVirtualPath } from "./virtual-path.js";

const WORKSPACE = SANDBOX_VIRTUAL_ROOTS.workspace;

/** Every sandbox tool's first argument, as in DeerFlow: the UI shows it as the step's progress label. */
export const descriptionArg = z
  .string()
  .describe("Why you are making this call, in a few words (e.g. 'check the test output'); shown to the user as progress.");

const pathArg = (what: string) =>
  z.string().min(1).describe(`${what} Absolute virtual path such as ${WORKSPACE}/src; a relative path is taken from ${WORKSPACE}.`);

export interface SandboxToolOptions {
  registry: SandboxRegistry;
  limits: SandboxToolLimits;
}

export const lsSchema = z.object({
  description: descriptionArg,
  path: pathArg("The folder to list."),
});

function renderTree(root: string, entries: readonly FileEntry[]): string {
  const lines: string[] = [];
  const sorted = entries
    .map((e) => ({ ...e, path: posix.resolve(e.path) }))
    .filter((e) => e.path !== root)
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const entry of sorted) {
    const rel = posix.relative(root, entry.path);
    const depth = rel.split("/").length - 1;
    const name = posix.basename(entry.path);
    const suffix = entry.type === "directory" ? "/" : entry.type === "symlink" ? "@" : ` (${entry.size} bytes)`;
    lines.push(`${"  ".repeat(depth + 1)}${name}${suffix}`);
  }
  return lines.length === 0 ? `${root}/ (empty)` : `${root}/\n${lines.join("\n")}`;
}

export function createLsTool({ registry, limits }: SandboxToolOptions): AntlerTool {
  return defineTool({
    name: "ls",
    description: `List a folder as a tree, ${limits.lsMaxDepth} level(s) deep. Folders end with "/", symlinks with "@", files show their size. Start with ${WORKSPACE}; uploads are in ${SANDBOX_VIRTUAL_ROOTS.uploads}, deliverables go to ${SANDBOX_VIRTUAL_ROOTS.outputs}.`,
    schema: lsSchema,
    async run({ path }, runtime) {
      const session = await openSession(registry, runtime, "ls");
      if (!session.ok) return session.message;
      const root = normalizeVirtualPath(path);
      try {
        const entries = await session.lease.sandbox.listDir(root, limits.lsMaxDepth);
        return truncateTail(renderTree(root, entries), limits.lsOutputMaxChars, "list a subfolder to see more");
      } catch (err) {
        return refusal(runtime, "ls", `cannot list ${root}: ${errorText(err)}`);
      }
    },
  });
}

export const globSchema = z.object({
  description: descriptionArg,
  pattern: z.string().min(1).describe("Glob pattern relative to `path`, e.g. '**/*.ts' or 'src/*.json'."),
  path: pathArg(`Folder to search in; default ${WORKSPACE}.`).optional(),
});

export function createGlobTool({ registry, limits }: SandboxToolOptions): AntlerTool {
  return defineTool({
    name: "glob",
    description: `Find files by name pattern (e.g. '**/*.py') under a folder; returns their absolute paths, at most ${limits.globMaxResults}.`,
    schema: globSchema,
    async run({ pattern, path }, runtime) {
      const session = await openSession(registry, runtime, "glob");
      if (!session.ok) return session.message;
      const root = normalizeVirtualPath(path ?? WORKSPACE);
      let found: string[];
      try {
        found = await session.lease.sandbox.glob(pattern, { path: root, maxResults: limits.globMaxResults + 1 });
      } catch (err) {
        return refusal(runtime, "glob", `glob ${JSON.stringify(pattern)} under ${root} failed: ${errorText(err)}`);
      }
      if (found.length === 0) return `No files match ${JSON.stringify(pattern)} under ${root}.`;
      const shown = found.slice(0, limits.globMaxResults);
      const more =
        found.length > shown.length
          ? `\n[showing the first ${shown.length} matches; narrow the pattern or the folder to see the rest]`
          : "";
      return `${shown.join("\n")}${more}`;
    },
  });
}

/** Longer matching lines are cut: a minified file would otherwise fill the whole answer with one line. */
const GREP_LINE_MAX_CHARS = 300;

export const grepSchema = z.object({
  description: descriptionArg,
  pattern: z.string().min(1).describe("Regular expression to search file contents for, e.g. 'def \\w+_tool' or 'TODO'."),
  path: pathArg(`Folder (or file) to search; default ${WORKSPACE}.`).optional(),
  glob: z.string().min(1).optional().describe("Only search files whose name matches this glob, e.g. '*.ts'."),
  ignore_case: z.boolean().optional().describe("Match letters regardless of case. Default false."),
});

export function createGrepTool({ registry, limits }: SandboxToolOptions): AntlerTool {
  return defineTool({
    name: "grep",
    description: `Search file contents with a regular expression; returns matching lines as 'path:line: text', at most ${limits.grepMaxResults}.`,
    schema: grepSchema,
    async run({ pattern, path, glob, ignore_case }, runtime) {
      const session = await openSession(registry, runtime, "grep");
      if (!session.ok) return session.message;
      const root = normalizeVirtualPath(path ?? WORKSPACE);
      let matches: Awaited<ReturnType<typeof session.lease.sandbox.grep>>;
      try {
        matches = await session.lease.sandbox.grep(pattern, {
          path: root,
          ...(glob !== undefined ? { glob } : {}),
          ignoreCase: ignore_case ?? false,
          maxMatches: limits.grepMaxResults + 1,
        });
      } catch (err) {
        return refusal(runtime, "grep", `grep ${JSON.stringify(pattern)} under ${root} failed: ${errorText(err)}`);
      }
      if (matches.length === 0)
        return `No matches for ${JSON.stringify(pattern)} under ${root}${glob ? ` in files matching ${glob}` : ""}.`;
      const shown = matches.slice(0, limits.grepMaxResults);
      const lines = shown.map((m) => {
        const text = m.text.length > GREP_LINE_MAX_CHARS ? `${m.text.slice(0, GREP_LINE_MAX_CHARS)}…` : m.text;
        return `${m.path}:${m.line}: ${text}`;
      });
      const more =
        matches.length > shown.length
          ? `\n[showing the first ${shown.length} matches; narrow the pattern, path or glob to see the rest]`
          : "";
      return `${lines.join("\n")}${more}`;
    },
  });
}

export const readFileSchema = z.object({
  description: descriptionArg,
  path: pathArg("The file to read."),
  start_line: z.number().int().positive().optional().describe("First line to return, 1-based, inclusive. Default: the first line."),
  end_line: z.number().int().positive().optional().describe("Last line to return, 1-based, inclusive. Default: the last line."),
});

/** Lines `start..end` (1-based, inclusive) of `content`; a final newline does not count as an extra line. */
function lineRange(
  content: string,
  start: number | undefined,
  end: number | undefined,
): { text: string; total: number } | { error: string } {
  const lines = content.split("\n");
  if (lines.length > 1 && lines.at(-1) === "") lines.pop();
  const total = content === "" ? 0 : lines.length;
  const from = start ?? 1;
  const to = Math.min(end ?? total, total);
  if (end !== undefined && end < from) return { error: `end_line ${end} is before start_line ${from}` };
  if (from > total) return { error: `start_line ${from} is past the end of the file, which has ${total} line(s)` };
  return { text: lines.slice(from - 1, to).join("\n"), total };
}

export function createReadFileTool({ registry, limits }: SandboxToolOptions): AntlerTool {
  return defineTool({
    name: "read_file",
    description:
      `Read a text file, whole or lines start_line..end_line (1-based, inclusive). Output over ${limits.readFileOutputMaxChars} characters is cut; ` +
      "read long files in line ranges. Reading a file is required before overwriting or editing it with write_file or str_replace.",
    schema: readFileSchema,
    async run({ path, start_line, end_line }, runtime) {
      const session = await openSession(registry, runtime, "read_file");
      if (!session.ok) return session.message;
      const file = normalizeVirtualPath(path);
      let current: Awaited<ReturnType<typeof readCurrent>>;
      try {
        current = await readCurrent(session.lease.sandbox, file);
      } catch (err) {
        return refusal(runtime, "read_file", `cannot read ${file}: ${errorText(err)}`);
      }
      if (!current.exists) return refusal(runtime, "read_file", `${file} does not exist. Use ls or glob to find the right path.`);
      const range = lineRange(current.content, start_line, end_line);
      if ("error" in range) return refusal(runtime, "read_file", `${file}: ${range.error}.`);
      // The whole content is stamped even for a line range: the gate is about knowing which version you edit.
      const update = stampContent(session.lease, file, current.content);
      if (range.total === 0) return reply(runtime, "read_file", `(${file} is empty)`, update);
      const text = range.text === "" ? "(the selected lines are empty)" : range.text;
      return reply(
        runtime,
        "read_file",
        truncateTail(text, limits.readFileOutputMaxChars, "pass start_line and end_line to read the rest"),
        update,
      );
    },
  });
}
