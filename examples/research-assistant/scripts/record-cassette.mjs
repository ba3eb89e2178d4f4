// Re-records cassettes/research-session.jsonl from a scripted session. The answers below are a script, not a
// model's output: the cassette only captures the exact requests the real client makes in this distribution
// and the scripted replies. Run: node scripts/record-cassette.mjs (after a build).
import { rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import { NOTES_SITE_URL, startNotesSite } from "../notes-site.mjs";
import { AGENT, PROMPT, REPORT } from "../session.mjs";

const here = join(dirname(fileURLToPath(import.meta.url)), "..");
process.env.RESEARCH_ASSISTANT_DIR = here;
const report = `# Building a reliable agent harness

## Keep state durable
Checkpoint the graph state after every step, so a thread resumes after a crash or a restart. Use SQLite
when embedded and PostgreSQL for fleets, and key checkpoints by user as well as thread.

## Put cross-cutting behaviour in middleware
Error handling, loop detection, summarization and clarification belong in middleware, not prompts.
Prefer wrap-style hooks; fuse node-style hooks so the per-turn cost stays flat. A failing tool should
become an error message the model can read.

## Treat tools as an attack surface
Validate arguments against schemas, confine file tools to the thread's folders, and screen every URL,
re-checking each redirect hop. Treat fetched pages as data: they can carry instructions aimed at the model.

_Sources: notes/checkpointing.md, notes/middleware.md, notes/tools.md, and the field guide "Shipping agent
tools safely" (fetched from the web)._
`;

const todos = (a, b, c) => [
  { content: "Search the research notes", status: a },
  { content: "Write the report", status: b },
  { content: "Add computed figures and present the report", status: c },
];

// Runs in the sandbox: tallies the report's recommendations per area and prints a Markdown table.
const stats = `const areas = {
  "Durable state": ["checkpoint every step", "SQLite embedded, PostgreSQL for fleets", "key checkpoints by user and thread"],
  "Middleware": ["cross-cutting behaviour in middleware", "prefer wrap-style hooks", "fuse node-style hooks", "tool errors the model can read"],
  "Tool safety": ["validate arguments", "confine file tools", "screen every URL"],
};
const rows = Object.entries(areas).map(([area, points]) => \`| \${area} | \${points.length} |\`);
const total = Object.values(areas).reduce((n, points) => n + points.length, 0);
console.log(["", "## Recommendations by area (computed in the sandbox)", "", "| area | recommendations |", "|---|---:|", ...rows, \`| total | \${total} |\`].join("\\n"));
`;

const steps = [
  { text: "I'll plan this first.", toolCalls: [{ name: "write_todos", args: { todos: todos("in_progress", "pending", "pending") } }] },
  { toolCalls: [{ name: "search_notes", args: { query: "checkpoint middleware tools safety" } }] },
  // One web source, fetched for real by @antler/tools-web (the page is on loopback; see notes-site.mjs).
  { text: "Checking the field guide on tool safety too.", toolCalls: [{ name: "web_fetch", args: { url: NOTES_SITE_URL } }] },
  {
    text: "The notes and the field guide cover state, middleware and tool safety. Writing the report.",
    toolCalls: [
      { name: "write_todos", args: { todos: todos("completed", "in_progress", "pending") } },
      { name: "write_report", args: { filename: REPORT, markdown: report } },
    ],
  },
  {
    text: "Adding a computed summary table from the sandbox.",
    toolCalls: [
      {
        name: "write_file",
        args: { description: "Script that tallies recommendations per area", path: "/mnt/user-data/workspace/stats.mjs", content: stats },
      },
    ],
  },
  {
    toolCalls: [
      {
        name: "bash",
        args: {
          description: "Run the tally and append it to the report",
          command: `node /mnt/user-data/workspace/stats.mjs | tee -a /mnt/user-data/outputs/${REPORT}`,
        },
      },
    ],
  },
  // Cross-check the table's total with a real MCP server (server-everything's get-sum): 3 + 4 + 3.
  { toolCalls: [{ name: "everything_get-sum", args: { a: 7, b: 3 } }] },
  { toolCalls: [{ name: "word_count", args: { text: report } }] },
  {
    toolCalls: [
      { name: "write_todos", args: { todos: todos("completed", "completed", "completed") } },
      { name: "present_files", args: { filepaths: [`/mnt/user-data/outputs/${REPORT}`] } },
    ],
  },
  {
    text: `Done. The report is in /mnt/user-data/outputs/${REPORT}: three sections (durable state, middleware, tool safety), drawn from your three notes and one web page, plus a table of 10 recommendations computed in the sandbox and checked with the MCP get-sum tool.`,
  },
  // The Title middleware's own model call, after the first exchange.
  { text: "Reliable agent harness report" },
].map((step, i) => ({ ...step, id: `research-${i}`, usage: { input_tokens: 400 + 50 * i, output_tokens: 60 } }));

await rm(join(here, "cassettes", "research-session.jsonl"), { force: true });
await rm(join(here, ".antler-record"), { recursive: true, force: true });
const site = await startNotesSite();
const client = await AntlerClient.create({
  configPath: join(here, "config.record.yaml"),
  plugins: [scriptedModelsPlugin({ scripted: steps })],
});
try {
  const answer = await client.chat(PROMPT, { threadId: "recording", agent: AGENT });
  console.log(`recorded ${steps.length} exchanges; final answer: ${answer}`);
} finally {
  await client.close();
  await site.close();
  await rm(join(here, ".antler-record"), { recursive: true, force: true });
}
