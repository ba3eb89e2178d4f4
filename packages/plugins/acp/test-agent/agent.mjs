#!/usr/bin/env node
// A real ACP agent for the plugin's tests, built on the SDK's agent side and speaking ndjson over stdio.
// Modes (env ACP_TEST_AGENT_MODE): "normal" (default) and "stall" (never finishes a prompt, ignores cancel).
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { agent, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const mode = process.env.ACP_TEST_AGENT_MODE ?? "normal";
const sessions = new Map();

// The test checks that this pid is gone after the tool returns.
writeFileSync(join(process.cwd(), "agent.pid"), String(process.pid));

const app = agent({ name: "antler-test-agent" })
  .onRequest("initialize", () => ({
    protocolVersion: PROTOCOL_VERSION,
    // Streamable HTTP MCP servers yes, SSE no: the client must offer only what the agent can use.
    agentCapabilities: { loadSession: false, mcpCapabilities: { http: true, sse: false } },
    agentInfo: { name: "antler-test-agent", version: "0.0.0" },
  }))
  .onRequest("session/new", ({ params }) => {
    const sessionId = randomUUID();
    sessions.set(sessionId, { cwd: params.cwd, mcpServers: params.mcpServers, meta: params._meta ?? {} });
    // The servers exactly as the client sent them, for the test to read.
    writeFileSync(join(params.cwd, "mcp-servers.json"), JSON.stringify(params.mcpServers));
    return { sessionId };
  })
  .onNotification("session/cancel", ({ params }) => {
    writeFileSync(join(process.cwd(), "cancel.txt"), params.sessionId);
  })
  .onRequest("session/prompt", async ({ params, client }) => {
    const session = sessions.get(params.sessionId);
    const text = params.prompt
      .filter((b) => b.type === "text")
      .map((b) => b.text)
      .join("\n");
    const say = (kind, chunk) =>
      client.notify("session/update", {
        sessionId: params.sessionId,
        update: { sessionUpdate: kind, content: { type: "text", text: chunk } },
      });

    await say("agent_message_chunk", "Working on it. ");
    await say("agent_thought_chunk", "SECRET-THOUGHT: the user probably wants notes.");
    if (mode === "stall") {
      await new Promise(() => {});
    }

    const trace = params._meta?.["antler/trace_id"] ?? "";
    writeFileSync(
      join(session.cwd, "notes.md"),
      `# Notes\n\n${text}\n\ntrace: ${trace}\nmodel: ${session.meta["antler/model"] ?? ""}\nmcp: ${session.mcpServers.map((s) => s.name).join(",")}\n`,
    );
    await say("agent_message_chunk", "Wrote notes.md. ");

    const permission = await client.request("session/request_permission", {
      sessionId: params.sessionId,
      toolCall: { toolCallId: "write-approved", title: "Write approved.md", kind: "edit", status: "pending" },
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    const allowed = permission.outcome.outcome === "selected" && permission.outcome.optionId === "allow";
    if (allowed) {
      writeFileSync(join(session.cwd, "approved.md"), "approved\n");
      await say("agent_message_chunk", "Permission granted, wrote approved.md.");
    } else {
      await say("agent_message_chunk", "Permission denied, skipped approved.md.");
    }
    return { stopReason: "end_turn" };
  });

app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
