// The example distribution's own plugin: a notes search over the Markdown files in ./notes and a report
// writer that saves Markdown into the thread's outputs folder. Plain JavaScript, no dependencies: the kernel
// passes its authoring API to the default-exported function.
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";

export default ({ definePlugin, defineTool, z, threadPaths, resolveVirtualPath }) =>
  definePlugin({
    name: "research-tools",
    version: "0.1.0",
    kernel: "^0.1.0",
    description: "search_notes over a local Markdown corpus, and write_report into the thread's outputs.",
    configSchema: z.object({
      notes_dir: z.string().default("./notes").describe("Folder of Markdown notes, relative to config.yaml."),
      max_hits: z.number().int().positive().max(20).default(5),
    }),
    setup(ctx) {
      const notesDir = resolve(ctx.paths.configDir, ctx.config.notes_dir);
      ctx.tools.add(
        defineTool({
          name: "search_notes",
          description: "Search the research notes for lines that mention any of the query's words. Returns matching lines with their note.",
          schema: z.object({ query: z.string().min(1).describe("Words to look for.") }),
          async run({ query }) {
            const words = query
              .toLowerCase()
              .split(/\W+/)
              .filter((w) => w.length > 2);
            const hits = [];
            for (const file of (await readdir(notesDir)).filter((f) => f.endsWith(".md")).sort()) {
              for (const line of (await readFile(join(notesDir, file), "utf8")).split("\n")) {
                if (words.some((w) => line.toLowerCase().includes(w))) hits.push(`[${file}] ${line.trim()}`);
              }
            }
            return hits.length ? hits.slice(0, ctx.config.max_hits).join("\n") : `No notes mention: ${query}`;
          },
        }),
        { group: "research" },
      );
      ctx.tools.add(
        defineTool({
          name: "write_report",
          description: "Write a Markdown report into /mnt/user-data/outputs/<filename>. Overwrites a file of the same name.",
          schema: z.object({
            filename: z
              .string()
              .regex(/^[\w.-]+\.md$/)
              .describe("File name ending in .md, no folders."),
            markdown: z.string().min(1).describe("The full report."),
          }),
          async run({ filename, markdown }, runtime) {
            const { user_id = "default", thread_id } = runtime.context ?? {};
            if (!thread_id) return "Error: write_report needs a thread (no thread_id in the run context).";
            const virtualPath = `/mnt/user-data/outputs/${basename(filename)}`;
            const host = resolveVirtualPath(threadPaths(ctx.paths.baseDir, user_id, thread_id), virtualPath, ["outputs"]);
            await mkdir(dirname(host), { recursive: true });
            await writeFile(host, markdown);
            return `Wrote ${markdown.length} characters to ${virtualPath}`;
          },
        }),
        { group: "research" },
      );
    },
  });
