// The offline demo: one research turn through the full pipeline. The model's replies come from a cassette;
// the todo list, the notes search, the report writer, present_files, SQLite checkpoints and the thread
// registry are all real. Prints the path of the report it produced.
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_USER_ID, resolveVirtualPath, threadPaths } from "@antler/kernel";
import { AntlerClient, TurnRenderer } from "@antler/plugin-runtime";
import { startNotesSite } from "./notes-site.mjs";
import { AGENT, PROMPT } from "./session.mjs";

const here = dirname(fileURLToPath(import.meta.url));
// config.yaml starts the MCP server from this folder's node_modules (stdio servers run in the thread workspace).
process.env.RESEARCH_ASSISTANT_DIR = here;
// The web page the agent fetches (a real HTTP server on loopback).
const site = await startNotesSite();
const client = await AntlerClient.create({ configPath: join(here, "config.yaml") });
try {
  const threadId = `demo-${randomUUID().slice(0, 8)}`;
  const agent = await client.getAgent(AGENT);
  console.log(`Antler research assistant (offline: cassette model), agent "${agent.name}": ${agent.description}\n\n> ${PROMPT}\n`);
  const renderer = new TurnRenderer(process.stdout);
  for await (const event of client.stream(PROMPT, { threadId, agent: AGENT })) renderer.handle(event);
  const turn = renderer.finish();
  if (turn.artifacts.length === 0) throw new Error("the agent presented no files");
  const paths = threadPaths(client.kernel.paths.baseDir, DEFAULT_USER_ID, threadId);
  console.log("\nPresented files:");
  for (const artifact of turn.artifacts) console.log(`  ${artifact}\n  → ${resolveVirtualPath(paths, artifact, ["outputs"])}`);
  // The part of the report that the sandbox computed (bash ran node there and appended its output).
  const report = await readFile(resolveVirtualPath(paths, turn.artifacts[0], ["outputs"]), "utf8");
  const computed = report.slice(report.indexOf("## Recommendations by area"));
  if (computed.startsWith("##")) console.log(`\nFrom the report, computed in the sandbox:\n\n${computed.trim()}`);
  const thread = await client.getThread(threadId);
  console.log(`\nThread "${thread.title}" (${threadId}), trace ${turn.traceId}: ${turn.toolCalls} tool calls, ${turn.toolErrors} failed.`);
} finally {
  await client.close();
  await site.close();
}
