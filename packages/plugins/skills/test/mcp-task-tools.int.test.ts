// Lives with the skills plugin (which may depend on MCP's test helpers) rather than in the MCP package: MCP
// depending on skills, even for tests, would make a build cycle through the gateway.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AntlerClient, type StreamEvent } from "@antler/plugin-runtime";
import { ToolMessage } from "@langchain/core/messages";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type JobServer, mcpTaskConfig, startJobServer, taskHarness } from "../../mcp/test/tasks-helpers.js";
import skillsPlugin from "../src/index.js";

let server: JobServer;
const cleanups: Array<() => Promise<void> | void> = [];
beforeAll(async () => {
  server = await startJobServer();
});
afterAll(async () => {
  await server.stop();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Runs one turn and returns its tool results (content by tool name). */
async function turn(client: AntlerClient, threadId: string, message: string): Promise<{ tools: Record<string, string> }> {
  const tools: Record<string, string> = {};
  for await (const event of client.stream(message, { threadId }) as AsyncIterable<StreamEvent>) {
    if (event.type === "messages-tuple" && event.data.type === "tool") tools[String(event.data.name)] = String(event.data.content);
  }
  return { tools };
}

describe("durable MCP tasks under a skill's allowed-tools", () => {
  it("the task tools are not exempt: not offered, and refused without starting, listing or cancelling anything", async () => {
    const dir = mkdtempSync(join(tmpdir(), "antler-mcp-tasks-skill-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(join(dir, "skills", "public", "echo-only"), { recursive: true });
    writeFileSync(
      join(dir, "skills", "public", "echo-only", "SKILL.md"),
      "---\nname: echo-only\ndescription: Echo things.\nallowed-tools: [jobs_echo]\n---\n\nOnly echo.\n",
    );
    const forbidden = ["jobs_start_job", "list_background_tasks", "cancel_background_task"];
    // Calls all three task tools at once, whatever it was offered, then answers.
    const h = await taskHarness({
      baseDir: dir,
      mcp: mcpTaskConfig(server.url),
      plugins: [skillsPlugin],
      respond: (messages) =>
        ToolMessage.isInstance(messages.at(-1)) || messages.at(-1)?.content === "plain"
          ? { text: "ok" }
          : {
              toolCalls: [
                { name: "jobs_start_job", args: { label: "skillblocked" } },
                { name: "list_background_tasks", args: {} },
                { name: "cancel_background_task", args: { task: "bgt_00000000000000000000000000000000" } },
              ],
            },
    });
    cleanups.push(() => h.close());
    await h.service.stopPoller();
    const client = new AntlerClient({ kernel: h.kernel });
    cleanups.push(() => client.close());
    const startsBefore = (await server.state()).startCalls.length;

    const { tools } = await turn(client, "t-skill", "/echo-only go");

    const offered = h.model().calls[0]?.tools ?? [];
    expect(offered).toContain("jobs_echo");
    for (const name of forbidden) {
      expect(offered).not.toContain(name);
      expect(tools[name]).toContain(`the tool "${name}" is not allowed while the skill "echo-only" is active`);
    }
    const state = await server.state();
    expect(state.startCalls).toHaveLength(startsBefore);
    expect(state.jobs.find((j) => j.label === "skillblocked")).toBeUndefined();
    // Without the skill, the same turn offers them (the refusal above is the skill's, not a missing tool).
    await turn(client, "t-plain", "plain");
    expect(h.model().calls.at(-1)?.tools).toEqual(expect.arrayContaining(forbidden));
  });
});
