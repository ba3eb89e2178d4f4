import { readFile, writeFile } from "node:fs/promises";
import { resolve as resolvePath } from "node:path";
import { parseArgs } from "node:util";
import { type CliCommand, type CliIO, DEFAULT_USER_ID } from "@antler/kernel";
import { MemoryClient } from "./client.js";
import { MemoryErrorCodes, memoryError } from "./errors.js";
import type { MemoryResponse } from "./schemas.js";

const write = (stream: NodeJS.WritableStream, text: string) => stream.write(text.endsWith("\n") ? text : `${text}\n`);

const SCOPE_OPTIONS = {
  user: { type: "string", short: "u" },
  agent: { type: "string", short: "a" },
  config: { type: "string", short: "c" },
} as const;

function parse<O extends Record<string, { type: "string" | "boolean"; short?: string }>>(args: string[], options: O, usage: string) {
  try {
    return parseArgs({ args, options: { ...SCOPE_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (err) {
    throw memoryError(MemoryErrorCodes.INVALID, (err as Error).message, { hint: `Usage: ${usage}` });
  }
}

function clientFor(io: CliIO, values: { user?: string | boolean | undefined; agent?: string | boolean | undefined }): MemoryClient {
  return new MemoryClient(io.kernel, {
    userId: typeof values.user === "string" ? values.user : DEFAULT_USER_ID,
    agent: typeof values.agent === "string" && values.agent !== "" ? values.agent : null,
  });
}

function describe(memory: MemoryResponse): string {
  const who = `${memory.user_id}${memory.agent_name ? ` (agent ${memory.agent_name})` : ""}`;
  const lines = [`Memory of ${who}${memory.updated_at ? `, updated ${memory.updated_at}` : ""}`];
  const fields: Array<[string, string]> = [
    ["Work", memory.profile.work_context],
    ["Personal", memory.profile.personal_context],
    ["Top of mind", memory.profile.top_of_mind],
    ["Recent months", memory.history.recent_months],
    ["Earlier", memory.history.earlier_context],
    ["Background", memory.history.long_term_background],
  ];
  for (const [label, value] of fields) if (value) lines.push(`  ${label}: ${value}`);
  lines.push(memory.facts.length ? `Facts (${memory.facts.length}):` : "No facts.");
  for (const f of memory.facts) lines.push(`  ${f.id}  [${f.category} ${f.confidence.toFixed(2)}]  ${f.content}  (${f.source})`);
  return lines.join("\n");
}

/** `antler memory show|export|import|clear`. The CLI acts as the operator for `--user` (default: the default user). */
export function memoryCommands(): CliCommand[] {
  const SHOW = "antler memory show [--user id] [--agent name] [--json]";
  const EXPORT = "antler memory export [--user id] [--agent name] [--out file.json]";
  const IMPORT = "antler memory import <file.json> [--user id] [--agent name] [--replace]";
  const CLEAR = "antler memory clear --yes [--user id] [--agent name]";
  return [
    {
      name: "memory show",
      summary: "Show a user's memory: profile, history and facts.",
      usage: SHOW,
      async run(args, io) {
        const { values } = parse(args, { json: { type: "boolean" } }, SHOW);
        const memory = await clientFor(io, values).getMemory();
        write(io.stdout, values.json ? JSON.stringify(memory, null, 2) : describe(memory));
        return 0;
      },
    },
    {
      name: "memory export",
      summary: "Write a user's memory as JSON (stdout or --out file).",
      usage: EXPORT,
      async run(args, io) {
        const { values } = parse(args, { out: { type: "string", short: "o" } }, EXPORT);
        const text = `${JSON.stringify(await clientFor(io, values).exportMemory(), null, 2)}\n`;
        if (typeof values.out === "string") {
          const file = resolvePath(io.cwd, values.out);
          await writeFile(file, text, { mode: 0o600 });
          write(io.stderr, `wrote ${file}`);
        } else io.stdout.write(text);
        return 0;
      },
    },
    {
      name: "memory import",
      summary: "Load memory from an export file (merge, or --replace).",
      usage: IMPORT,
      async run(args, io) {
        const { values, positionals } = parse(args, { replace: { type: "boolean" } }, IMPORT);
        const [path, ...extra] = positionals;
        if (!path || extra.length > 0) {
          throw memoryError(MemoryErrorCodes.INVALID, path ? "give exactly one file" : "give the export file to import", {
            hint: `Usage: ${IMPORT}`,
          });
        }
        const file = resolvePath(io.cwd, path);
        let data: unknown;
        try {
          data = JSON.parse(await readFile(file, "utf8"));
        } catch (err) {
          throw memoryError(MemoryErrorCodes.INVALID, `cannot read ${file} as JSON: ${(err as Error).message}`, {
            where: file,
            hint: "Import a file written by `antler memory export` or GET /api/memory/export.",
          });
        }
        const memory = await clientFor(io, values).importMemory(data, { mode: values.replace ? "replace" : "merge" });
        write(
          io.stdout,
          `Imported into ${memory.user_id}${memory.agent_name ? ` (agent ${memory.agent_name})` : ""}: ${memory.facts.length} facts now.`,
        );
        return 0;
      },
    },
    {
      name: "memory clear",
      summary: "Delete a user's memory (profile, history and facts).",
      usage: CLEAR,
      async run(args, io) {
        const { values } = parse(args, { yes: { type: "boolean", short: "y" } }, CLEAR);
        if (!values.yes) {
          write(
            io.stderr,
            `This deletes the memory for good; run again with --yes (export it first with \`antler memory export\`).\nUsage: ${CLEAR}`,
          );
          return 2;
        }
        const memory = await clientFor(io, values).clearMemory();
        write(io.stdout, `Cleared the memory of ${memory.user_id}${memory.agent_name ? ` (agent ${memory.agent_name})` : ""}.`);
        return 0;
      },
    },
  ];
}
